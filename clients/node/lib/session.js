'use strict';
// A session on a `tensorweave server` through its MasterService (CreateSession, MakeCallable,
// RunCallable, CloseSession): the graph goes over as a GraphDef, tensors as TensorProtos.

const { makeClient } = require('./rpc');
const { toProto, fromProto } = require('./tensor');
const { asEnum } = require('./dtypes');

const MASTER = 'tensorweave.MasterService';
const METHODS = {
  CreateSession: ['tensorweave.CreateSessionRequest', 'tensorweave.CreateSessionResponse'],
  MakeCallable: ['tensorweave.MakeCallableRequest', 'tensorweave.MakeCallableResponse'],
  RunCallable: ['tensorweave.RunCallableRequest', 'tensorweave.RunCallableResponse'],
  CloseSession: ['tensorweave.CloseSessionRequest', 'tensorweave.CloseSessionResponse'],
};

function tensorName(t) {
  if (typeof t === 'string') return t.includes(':') ? t : `${t}:0`;
  return t.name;
}

class Session {
  /** `target`: "grpc://host:port" or "host:port"; `options` as rpc.makeClient takes. */
  constructor(target, options = {}) {
    this.client = makeClient(MASTER, METHODS, target.replace(/^grpc:\/\//, ''), options);
    this.handle = null;
    this.callables = new Map();
  }

  /** Sends the graph; resolves once the master holds it. */
  async create(graph) {
    const resp = await this.client.CreateSession({ graph_def: graph.toGraphDef() });
    this.handle = resp.session_handle;
    return this;
  }

  /**
   * Runs `fetches` (Tensors or "name:0") with `feeds` ([[Tensor or name, value], ...]);
   * resolves to one {dtype, shape, values, array} per fetch.
   */
  async run(fetches, feeds = [], targets = []) {
    const fetchNames = fetches.map(tensorName);
    const feedNames = feeds.map(([t]) => tensorName(t));
    const key = JSON.stringify([feedNames, fetchNames, targets]);
    if (!this.callables.has(key)) {
      const made = await this.client.MakeCallable({ session_handle: this.handle,
        feed: feedNames, fetch: fetchNames, target: targets });
      this.callables.set(key, made);
    }
    const callable = this.callables.get(key);
    const feedProtos = feeds.map(([t, value], i) => {
      const dtype = (typeof t === 'object' && t.dtype) || (callable.feed_dtype || [])[i] ||
        asEnum('float32');
      return toProto(value, dtype);
    });
    const resp = await this.client.RunCallable({ session_handle: this.handle,
      handle: callable.handle, feed: feedProtos });
    return (resp.fetch || []).map(fromProto);
  }

  async close() {
    if (this.handle !== null) {
      await this.client.CloseSession({ session_handle: this.handle });
      this.handle = null;
    }
    this.client.close();
  }
}

module.exports = { Session };
