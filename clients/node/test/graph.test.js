'use strict';
// Graphs built with the generated op wrappers run on a real `tensorweave server`.

const test = require('node:test');
const assert = require('node:assert');
const tw = require('..');
const { start } = require('./helpers');

let server;
let target;

test.before(async () => {
  server = await start(['server', '--port', '0'], /^target (grpc:\/\/\S+)/);
  [, target] = server.match;
});

test.after(async () => {
  if (server) await server.stop();
});

function close(a, b, tol = 1e-5) {
  assert.strictEqual(a.length, b.length);
  a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) <= tol, `${v} vs ${b[i]} at ${i}`));
}

test('a dense layer with softmax runs on the server', async () => {
  const g = new tw.Graph();
  const x = tw.placeholder(g, 'float32', [null, 2], 'x');
  const w = tw.constant(g, [[1, -1, 0.5], [2, 0, -0.5]]);
  const b = tw.constant(g, [0.1, 0.2, 0.3]);
  const logits = tw.ops.biasAdd(g, tw.ops.matMul(g, x, w), b);
  const probs = tw.ops.softmax(g, logits, {}, 'probs');
  const sum = tw.ops.sum(g, probs, tw.constant(g, [1], 'int32'), { keep_dims: false });
  const sess = await new tw.Session(target).create(g);
  try {
    const [out, total] = await sess.run([probs, sum], [[x, [[1, 2], [0.5, -1]]]]);
    assert.deepStrictEqual(out.shape, [2, 3]);
    const row = [1 * 1 + 2 * 2 + 0.1, -1 + 0.2, 0.5 - 1 + 0.3];
    const e = row.map(Math.exp);
    close(out.values.slice(0, 3), e.map((v) => v / e.reduce((p, q) => p + q)));
    close(total.values, [1, 1]);
    const [again] = await sess.run([logits], [[x, [[0, 0]]]]);   // the same callable, reused
    close(again.values, [0.1, 0.2, 0.3]);
  } finally {
    await sess.close();
  }
});

test('integer and string ops, and a list input', async () => {
  const g = new tw.Graph();
  const a = tw.constant(g, [1, 2, 3], 'int32');
  const packed = tw.ops.pack(g, [a, tw.ops.mul(g, a, a)], { axis: 1 });
  const joined = tw.ops.stringJoin(g, [tw.constant(g, ['a', 'b']), tw.constant(g, ['x', 'y'])],
    { separator: '-' });
  const sess = await new tw.Session(target).create(g);
  try {
    const [p, s] = await sess.run([packed, joined]);
    assert.deepStrictEqual(p.array, [[1, 1], [2, 4], [3, 9]]);
    assert.deepStrictEqual(s.values, ['a-x', 'b-y']);
  } finally {
    await sess.close();
  }
});

test('wrappers check what they are given; the server names a bad run', async () => {
  const g = new tw.Graph();
  const x = tw.placeholder(g, 'float32', [2], 'x');
  assert.throws(() => tw.ops.matMul(g, x), /MatMul: input b must be a Tensor/);
  assert.throws(() => tw.ops.add(g, x, tw.constant(g, [1, 2], 'int32')), /is int32 but T is/);
  const y = tw.ops.square(g, x);
  const sess = await new tw.Session(target).create(g);
  try {
    await assert.rejects(sess.run([y]), (err) => err.code === 3 && /x/.test(err.details));
  } finally {
    await sess.close();
  }
});
