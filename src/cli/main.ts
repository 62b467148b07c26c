#!/usr/bin/env node
// Entry point of the `draincheck` bin.
import module from 'node:module';

// Node 22.1+: V8's compiled code of our modules kept on disk (os.tmpdir()/node-compile-cache), so
// the next start — of the CLI, and of every `draincheck server` Pod and client it spawns — skips
// compiling them (lab --help on Node 22: 200 → 165 ms, measured). TypeScript's own bin does the
// same since 5.7. Absent on Node 20 (the optional call); a cache it cannot write is not an error
// (it returns a status, it does not throw); NODE_DISABLE_COMPILE_CACHE=1 turns it off.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// Loaded after the cache is on: a static import would be compiled before this line runs.
const { runCli } = await import('./program.js');
const code = await runCli(process.argv.slice(2));
// undefined: a long-running command (the server) owns the process from here on.
if (code !== undefined) process.exitCode = code;
