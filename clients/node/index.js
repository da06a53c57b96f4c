'use strict';
// @tensorweave/client: build graphs with the generated op wrappers, run them on a
// `tensorweave server`, and query `tensorweave serve` (TF Serving's gRPC and REST APIs).
//
//   const tw = require('@tensorweave/client');
//   const g = new tw.Graph();
//   const x = tw.placeholder(g, 'float32', [null, 2], 'x');
//   const y = tw.ops.matMul(g, x, tw.constant(g, [[1], [2]]));
//   const sess = await new tw.Session('grpc://127.0.0.1:2222').create(g);
//   const [out] = await sess.run([y], [[x, [[3, 4]]]]);   // out.array → [[11]]

const { Graph, Tensor, applyOp, constAttrs } = require('./lib/graph');
const ops = require('./lib/ops.generated');
const { Session } = require('./lib/session');
const { PredictionClient, RestClient } = require('./lib/serving');
const tensor = require('./lib/tensor');
const { DT } = require('./lib/dtypes');

/** A Const node holding `value` (nested arrays; dtype default float32, or string). */
function constant(graph, value, dtype, name) {
  return ops.const(graph, constAttrs(value, dtype), name || 'Const');
}

/** A Placeholder of `dtype` and `shape` (null dims unknown; shape null: unknown rank). */
function placeholder(graph, dtype, shape, name) {
  return ops.placeholder(graph, { dtype, shape }, name || 'Placeholder');
}

module.exports = { Graph, Tensor, Session, PredictionClient, RestClient, applyOp, constant,
  placeholder, ops, tensor, DT };
