'use strict';
// Predictions from a real `tensorweave serve` over gRPC (TF Serving's PredictionService) and
// REST, for TensorFlow's SavedModel (tests/saved_model/tf_saved_model) and for one exported
// by tensorweave.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const tw = require('..');
const { start, python, REPO } = require('./helpers');

const X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]];
let server;
let grpcAddress;
let rest;

// TensorFlow's fixture model: logits = x @ (arange(12)/10 as 3x4) + b, probs = softmax(logits)
function expected(x) {
  const b = [0.1, -0.2, 0.3, 0.0];
  return x.map((row) => {
    const logits = b.map((bias, j) => row.reduce((acc, v, i) => acc + v * (i * 4 + j) / 10, bias));
    const e = logits.map(Math.exp);
    const total = e.reduce((p, q) => p + q);
    return { logits, probs: e.map((v) => v / total) };
  });
}

function close(a, b, tol = 1e-5) {
  a.flat().forEach((v, i) => assert.ok(Math.abs(v - b.flat()[i]) <= tol, `${v} vs ${b.flat()[i]}`));
}

test.before(async () => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'tw-node-serve-'));
  fs.cpSync(path.join(REPO, 'tests', 'saved_model', 'tf_saved_model'), path.join(base, '1'),
    { recursive: true });
  server = await start(['serve', '--model_name', 'tfm', '--model_base_path', base, '--port', '0',
    '--rest_api_port', '0', '--file_system_poll_wait_seconds', '0.2'],
  /^serving tfm grpc (\S+) rest (\S+)/);
  [, grpcAddress] = server.match;
  rest = new tw.RestClient(server.match[2]);
  server.base = base;
});

test.after(async () => {
  if (server) await server.stop();
});

test('gRPC Predict, Classify, metadata and status on TensorFlow\'s SavedModel', async () => {
  const client = new tw.PredictionClient(grpcAddress);
  try {
    const { version, outputs } = await client.predict('tfm', { x: { value: X } });
    assert.strictEqual(version, 1);
    assert.deepStrictEqual(outputs.probs.shape, [2, 4]);
    close(outputs.probs.array, expected(X).map((r) => r.probs));
    const classes = await client.classify('tfm', X.map((row) => ({ x: row })),
      { signatureName: 'classify' });
    assert.deepStrictEqual(classes[0].map((c) => c.label), ['a', 'b', 'c', 'd']);
    close(classes.map((r) => r.map((c) => c.score)), expected(X).map((r) => r.probs));
    const sigs = await client.metadata('tfm');
    assert.deepStrictEqual(Object.keys(sigs).sort(), ['asset', 'classify', 'regress',
      'serving_default']);
    assert.strictEqual(sigs.serving_default.inputs.x.dtype, 'DT_FLOAT');
    assert.deepStrictEqual(await client.status('tfm'), [{ version: 1, state: 30 }]);
    await assert.rejects(client.predict('nope', { x: { value: X } }),
      (err) => err.code === 5 && /Latest\(nope\)/.test(err.details));
  } finally {
    client.close();
  }
});

test('REST predict (rows and columns), status and errors', async () => {
  const rows = await rest.predict('tfm', { instances: X });
  close(rows.predictions.map((p) => p.probs), expected(X).map((r) => r.probs));
  const cols = await rest.predict('tfm', { inputs: { x: X } }, 1);
  close(cols.outputs.logits, expected(X).map((r) => r.logits));
  const status = await rest.status('tfm');
  assert.strictEqual(status.model_version_status[0].state, 'AVAILABLE');
  await assert.rejects(rest.predict('tfm', { instances: [[1, 2]] }),
    (err) => err.status === 400);
  await assert.rejects(rest.predict('tfm', { signature_name: 'zzz', instances: X }),
    (err) => err.status === 400 && /zzz/.test(err.message));
});

test('a model exported by tensorweave, picked up as version 2', async () => {
  const staging = path.join(server.base, 'staging');
  python(`
import numpy as np, tensorweave as tf
x = tf.placeholder(tf.float32, [None, 3], name="x")
w = tf.get_variable("w", initializer=np.full((3, 1), 2.0, np.float32))
with tf.Session() as s:
    s.run(tf.global_variables_initializer())
    tf.saved_model.simple_save(s, ${JSON.stringify(staging)}, {"x": x}, {"y": tf.matmul(x, w)})
`);
  fs.renameSync(staging, path.join(server.base, '2'));
  const client = new tw.PredictionClient(grpcAddress);
  try {
    for (let i = 0; i < 300; i += 1) {
      const st = await client.status('tfm');
      if (st.some((s) => s.version === 2 && s.state === 30)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const { version, outputs } = await client.predict('tfm', { x: { value: X } });
    assert.strictEqual(version, 2);
    close(outputs.y.array, X.map((r) => [2 * (r[0] + r[1] + r[2])]));
    const body = await rest.predict('tfm', { instances: X });
    close(body.predictions, X.map((r) => [2 * (r[0] + r[1] + r[2])]));
  } finally {
    client.close();
  }
});
