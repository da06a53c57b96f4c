'use strict';
// TensorProto <-> {dtype, shape, values} (values flat, row-major). Numbers travel as
// little-endian tensor_content; strings as string_val; both forms are read back.

const { DT, asEnum, dtypeName } = require('./dtypes');

const ARRAYS = {
  [DT.float32]: Float32Array, [DT.float64]: Float64Array, [DT.int32]: Int32Array,
  [DT.uint8]: Uint8Array, [DT.int16]: Int16Array, [DT.int8]: Int8Array,
  [DT.int64]: BigInt64Array, [DT.uint16]: Uint16Array, [DT.uint32]: Uint32Array,
  [DT.uint64]: BigUint64Array,
};
const VAL_FIELDS = {
  [DT.float32]: 'float_val', [DT.float64]: 'double_val', [DT.int32]: 'int_val',
  [DT.uint8]: 'int_val', [DT.int16]: 'int_val', [DT.int8]: 'int_val', [DT.int64]: 'int64_val',
  [DT.bool]: 'bool_val', [DT.string]: 'string_val', [DT.uint32]: 'uint32_val',
  [DT.uint64]: 'uint64_val', [DT.uint16]: 'int_val',
};

function flatten(value, shape = []) {
  if (!Array.isArray(value)) return { values: [value], shape };
  if (value.length === 0) return { values: [], shape: [...shape, 0] };
  const parts = value.map((v) => flatten(v, []));
  const inner = JSON.stringify(parts[0].shape);
  if (parts.some((p) => JSON.stringify(p.shape) !== inner)) {
    throw new TypeError('ragged nested arrays cannot form a tensor');
  }
  return { values: parts.flatMap((p) => p.values), shape: [value.length, ...parts[0].shape] };
}

/** A TensorProto object from nested arrays (or a scalar) of `dtype`. */
function toProto(value, dtype, shape) {
  const e = asEnum(dtype);
  const flat = flatten(value);
  const dims = shape || flat.shape;
  const proto = { dtype: e, tensor_shape: { dim: dims.map((size) => ({ size })) } };
  if (e === DT.string) {
    proto.string_val = flat.values.map((v) => (Buffer.isBuffer(v) ? v : Buffer.from(String(v))));
  } else if (e === DT.bool) {
    proto.bool_val = flat.values.map(Boolean);
  } else if (ARRAYS[e]) {
    const Arr = ARRAYS[e];
    const big = Arr === BigInt64Array || Arr === BigUint64Array;
    const typed = Arr.from(flat.values, (v) => (big ? BigInt(v) : v));
    proto.tensor_content = Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength);
  } else {
    throw new TypeError(`cannot encode ${dtypeName(e)} tensors`);
  }
  return proto;
}

function reshape(values, shape) {
  if (shape.length === 0) return values[0];
  const [n, ...rest] = shape;
  const size = rest.reduce((a, b) => a * b, 1);
  return Array.from({ length: n }, (_, i) => reshape(values.slice(i * size, (i + 1) * size), rest));
}

/** {dtype, shape, values (flat), array (nested)} of a decoded TensorProto object. */
function fromProto(proto) {
  const e = proto.dtype;
  const shape = ((proto.tensor_shape && proto.tensor_shape.dim) || []).map((d) => Number(d.size));
  const n = shape.reduce((a, b) => a * b, 1);
  let values;
  if (proto.tensor_content && proto.tensor_content.length && ARRAYS[e]) {
    const buf = Buffer.from(proto.tensor_content);
    const Arr = ARRAYS[e];
    const copy = new Uint8Array(buf);   // aligned copy
    values = Array.from(new Arr(copy.buffer, 0, buf.length / Arr.BYTES_PER_ELEMENT), Number);
  } else if (e === DT.bool && proto.tensor_content && proto.tensor_content.length) {
    values = Array.from(proto.tensor_content, Boolean);
  } else {
    const field = VAL_FIELDS[e];
    const stored = (proto[field] || []).map((v) => (e === DT.string ? Buffer.from(v) : v));
    values = stored.length === n || stored.length === 0 ? stored :
      Array.from({ length: n }, (_, i) => stored[Math.min(i, stored.length - 1)]);
  }
  if (e === DT.string) values = values.map((b) => b.toString('utf8'));
  return { dtype: dtypeName(e), shape, values, array: reshape(values, shape) };
}

module.exports = { toProto, fromProto, flatten };
