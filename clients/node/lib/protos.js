'use strict';
// The protobuf messages tensorweave speaks, loaded from the repository's own .proto files
// (src/tensorweave/proto; TENSORWEAVE_PROTO_ROOT overrides where `tensorweave/proto/...` is
// found). Field names are kept as written in the .proto files (snake_case).

const path = require('node:path');
const protobuf = require('protobufjs');

const PROTO_ROOT = process.env.TENSORWEAVE_PROTO_ROOT ||
  path.resolve(__dirname, '..', '..', '..', 'src');

const FILES = [
  'tensorweave/proto/graph.proto',
  'tensorweave/proto/master_service.proto',
  'tensorweave/proto/serving_apis.proto',
];

let root = null;

/** The protobufjs Root with every message (loaded once). */
function protos() {
  if (root === null) {
    root = new protobuf.Root();
    root.resolvePath = (origin, target) => {
      if (target.startsWith('google/protobuf/')) return target;  // protobufjs' own copies
      return path.join(PROTO_ROOT, target);
    };
    root.loadSync(FILES, { keepCase: true });
    root.resolveAll();
  }
  return root;
}

/** The message type `name` ("tensorweave.GraphDef"). */
function type(name) {
  return protos().lookupType(name);
}

const CONVERT = { longs: Number, enums: Number, bytes: Buffer, defaults: false, oneofs: true };

/** A serializer/deserializer pair for gRPC from a message type name. */
function codec(name) {
  const t = type(name);
  return {
    serialize: (obj) => Buffer.from(t.encode(t.fromObject(obj)).finish()),
    deserialize: (buf) => t.toObject(t.decode(buf), CONVERT),
  };
}

module.exports = { protos, type, codec, PROTO_ROOT };
