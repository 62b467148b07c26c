#!/usr/bin/env node
// Entry point of the `kubectl-draincheck` bin: kubectl finds it on PATH and runs it for
// `kubectl draincheck ...`, passing the arguments after the plugin name as they are. The
// commands are draincheck's; only the default platform differs — a kubectl user means the
// cluster kubectl talks to (--context / --namespace / --kubeconfig work as in kubectl).
import { runCli } from './program.js';

process.env.DRAINCHECK_PLATFORM ??= 'kube';
const code = await runCli(process.argv.slice(2), 'kubectl draincheck');
if (code !== undefined) process.exitCode = code;
