'use strict';
// Unary gRPC clients for services given as {method: [request type, response type]} under a
// wire service name, with an optional bearer token (TENSORWEAVE_RPC_TOKEN, as the Python side).

const grpc = require('@grpc/grpc-js');
const { codec } = require('./protos');

function credentials(options) {
  if (!options.rootCerts) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(options.rootCerts, options.privateKey || null,
    options.certChain || null);
}

/**
 * A client object whose methods return promises: `client.Predict(request, {timeoutMs})`.
 * `options`: {token, rootCerts, privateKey, certChain, timeoutMs (default 30000)}.
 */
function makeClient(service, methods, address, options = {}) {
  const definition = {};
  for (const [name, [req, resp]] of Object.entries(methods)) {
    const reqCodec = codec(req);
    const respCodec = codec(resp);
    definition[name] = {
      path: `/${service}/${name}`, requestStream: false, responseStream: false,
      requestSerialize: reqCodec.serialize, requestDeserialize: reqCodec.deserialize,
      responseSerialize: respCodec.serialize, responseDeserialize: respCodec.deserialize,
    };
  }
  const Ctor = grpc.makeGenericClientConstructor(definition, service);
  const raw = new Ctor(address, credentials(options));
  const token = options.token || process.env.TENSORWEAVE_RPC_TOKEN;
  const client = { close: () => raw.close() };
  for (const name of Object.keys(methods)) {
    client[name] = (request, callOptions = {}) => new Promise((resolve, reject) => {
      const metadata = new grpc.Metadata();
      if (token) metadata.set('authorization', `Bearer ${token}`);
      const deadline = new Date(Date.now() + (callOptions.timeoutMs || options.timeoutMs || 30000));
      raw[name](request, metadata, { deadline }, (err, response) => {
        if (err) reject(err); else resolve(response);
      });
    });
  }
  return client;
}

module.exports = { makeClient, status: grpc.status };
