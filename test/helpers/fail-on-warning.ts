// Preloaded into every test process (see scripts/run-tests.mjs): a Node warning is a defect,
// not noise, so it turns the process's exit code to failure while still being printed.
process.on('warning', (warning) => {
  process.exitCode = 1;
  console.error(`[fail-on-warning] ${warning.name}: ${warning.message}`);
});
