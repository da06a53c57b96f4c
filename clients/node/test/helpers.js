'use strict';
// Starts real tensorweave processes for the tests: `tensorweave server` and `tensorweave serve`
// (with TENSORWEAVE_PYTHON, default the repository's .venv/bin/python), stopped after.

const { spawn, execFileSync } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');

const REPO = path.resolve(__dirname, '..', '..', '..');
const PYTHON = process.env.TENSORWEAVE_PYTHON || path.join(REPO, '.venv', 'bin', 'python');

/** Runs `tensorweave ARGS...` until it prints a line matching `ready`; resolves to
 * {proc, match, stop()}. Rejects if it exits first or takes more than `timeoutMs`. */
function start(args, ready, timeoutMs = 120000) {
  const proc = spawn(PYTHON, ['-m', 'tensorweave.cli.main', ...args],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill(); reject(new Error(`timeout: ${stderr}`)); },
      timeoutMs);
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`exit ${code}: ${stderr}`)); });
    readline.createInterface({ input: proc.stdout }).on('line', (line) => {
      const match = ready.exec(line);
      if (!match) return;
      clearTimeout(timer);
      proc.removeAllListeners('exit');
      const stop = () => new Promise((done) => {
        proc.on('exit', done);
        proc.kill('SIGTERM');
      });
      resolve({ proc, match, stop });
    });
  });
}

/** Runs a Python snippet with the repository's Python (to export a model for the tests). */
function python(code) {
  return execFileSync(PYTHON, ['-c', code], { cwd: REPO, encoding: 'utf8' });
}

module.exports = { start, python, REPO, PYTHON };
