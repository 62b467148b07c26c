#!/usr/bin/env node
// Entry point of the `draincheck` bin.
import { runCli } from './program.js';

const code = await runCli(process.argv.slice(2));
// undefined: a long-running command (the server) owns the process from here on.
if (code !== undefined) process.exitCode = code;
