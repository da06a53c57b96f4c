'use strict';
// TensorFlow's DataType enum values (types.proto) and how values of each are stored.

const DT = {
  float32: 1, float64: 2, int32: 3, uint8: 4, int16: 5, int8: 6, string: 7, complex64: 8,
  int64: 9, bool: 10, bfloat16: 14, uint16: 17, complex128: 18, float16: 19, uint32: 22,
  uint64: 23,
};
const NAMES = Object.fromEntries(Object.entries(DT).map(([k, v]) => [v, k]));
const ALIASES = { float: 'float32', double: 'float64', half: 'float16' };

/** The enum value of a dtype given as a name ("float32", "DT_FLOAT", "float") or a number. */
function asEnum(dtype) {
  if (typeof dtype === 'number') return dtype;
  let name = String(dtype);
  if (name.startsWith('DT_')) name = name.slice(3).toLowerCase();
  name = ALIASES[name] || name;
  if (!(name in DT)) throw new TypeError(`unknown dtype ${dtype}`);
  return DT[name];
}

function dtypeName(e) {
  return NAMES[e] || `dtype(${e})`;
}

module.exports = { DT, asEnum, dtypeName };
