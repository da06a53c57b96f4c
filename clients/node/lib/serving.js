'use strict';
// Clients of `tensorweave serve` (and of TensorFlow Serving): gRPC PredictionService and
// ModelService under TF Serving's names, and the REST API.

const { makeClient } = require('./rpc');
const { toProto, fromProto } = require('./tensor');
const { type } = require('./protos');

const PREDICTION = 'tensorflow.serving.PredictionService';
const MODEL = 'tensorflow.serving.ModelService';
const S = 'tensorweave.serving.';
const PREDICTION_METHODS = {
  Predict: [`${S}PredictRequest`, `${S}PredictResponse`],
  Classify: [`${S}ClassificationRequest`, `${S}ClassificationResponse`],
  Regress: [`${S}RegressionRequest`, `${S}RegressionResponse`],
  GetModelMetadata: [`${S}GetModelMetadataRequest`, `${S}GetModelMetadataResponse`],
};
const MODEL_METHODS = { GetModelStatus: [`${S}GetModelStatusRequest`, `${S}GetModelStatusResponse`] };

function modelSpec(model, { version, signatureName } = {}) {
  const spec = { name: model, signature_name: signatureName || '' };
  if (version !== undefined) spec.version = { value: version };
  return spec;
}

class PredictionClient {
  constructor(address, options = {}) {
    this.predictions = makeClient(PREDICTION, PREDICTION_METHODS, address, options);
    this.models = makeClient(MODEL, MODEL_METHODS, address, options);
  }

  /** inputs: {key: {value: nested arrays, dtype}}; resolves to {version, outputs: {key: tensor}}. */
  async predict(model, inputs, options = {}) {
    const req = { model_spec: modelSpec(model, options), inputs: {} };
    for (const [key, { value, dtype }] of Object.entries(inputs)) {
      req.inputs[key] = toProto(value, dtype || 'float32');
    }
    const resp = await this.predictions.Predict(req);
    const outputs = {};
    for (const [key, proto] of Object.entries(resp.outputs || {})) outputs[key] = fromProto(proto);
    return { version: resp.model_spec.version.value, outputs };
  }

  /** examples: [{feature: number[] | string[]}]; resolves to [[{label, score}], ...]. */
  async classify(model, examples, options = {}) {
    const resp = await this.predictions.Classify({ model_spec: modelSpec(model, options),
      input: { example_list: { examples: examples.map(toExample) } } });
    return resp.result.classifications.map((c) => c.classes.map((k) => ({ label: k.label,
      score: k.score || 0 })));
  }

  /** Resolves to {signature name: SignatureDef}. */
  async metadata(model, options = {}) {
    const resp = await this.predictions.GetModelMetadata({ model_spec: modelSpec(model, options),
      metadata_field: ['signature_def'] });
    const packed = resp.metadata.signature_def;
    const map = type(`${S}SignatureDefMap`).decode(packed.value);
    return type(`${S}SignatureDefMap`).toObject(map, { enums: String, longs: Number })
      .signature_def;
  }

  /** Resolves to [{version, state}] (state as TF Serving's enum number: 30 = AVAILABLE). */
  async status(model, options = {}) {
    const resp = await this.models.GetModelStatus({ model_spec: modelSpec(model, options) });
    return resp.model_version_status.map((s) => ({ version: s.version, state: s.state }));
  }

  close() {
    this.predictions.close();
    this.models.close();
  }
}

function toExample(features) {
  const feature = {};
  for (const [name, value] of Object.entries(features)) {
    const values = Array.isArray(value) ? value : [value];
    if (values.every((v) => typeof v === 'string')) {
      feature[name] = { bytes_list: { value: values.map((v) => Buffer.from(v)) } };
    } else if (values.every(Number.isInteger)) {
      feature[name] = { int64_list: { value: values } };
    } else {
      feature[name] = { float_list: { value: values } };
    }
  }
  return { features: { feature } };
}

/** The REST API: `new RestClient('http://127.0.0.1:8501')`. */
class RestClient {
  constructor(base) {
    this.base = base.replace(/\/$/, '');
  }

  async call(method, path, body) {
    const resp = await fetch(this.base + path, {
      method, headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await resp.json();
    if (!resp.ok) {
      const err = new Error(json.error || `HTTP ${resp.status}`);
      err.status = resp.status;
      throw err;
    }
    return json;
  }

  predict(model, body, version) {
    const v = version === undefined ? '' : `/versions/${version}`;
    return this.call('POST', `/v1/models/${model}${v}:predict`, body);
  }

  status(model) {
    return this.call('GET', `/v1/models/${model}`);
  }

  metadata(model) {
    return this.call('GET', `/v1/models/${model}/metadata`);
  }
}

module.exports = { PredictionClient, RestClient };
