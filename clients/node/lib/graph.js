'use strict';
// A graph under construction: nodes in the order they were added, unique names, each output
// a Tensor that knows its dtype. `applyOp(graph, opDef, inputs, attrs, name)` adds one node the
// way tensorweave's and TensorFlow's Python wrappers do: type attrs inferred from the inputs,
// list lengths counted, other attrs converted by their declared type, defaults filled in.

const { asEnum, dtypeName } = require('./dtypes');
const { toProto, flatten } = require('./tensor');

class Tensor {
  constructor(node, index, dtype) {
    this.node = node;
    this.index = index;
    this.dtype = dtype;   // enum value
  }

  get name() {
    return `${this.node}:${this.index}`;
  }

  /** How a NodeDef input names this tensor. */
  get ref() {
    return this.index === 0 ? this.node : this.name;
  }
}

class Graph {
  constructor() {
    this.nodes = [];
    this.names = new Set();
  }

  uniqueName(base) {
    let name = base;
    for (let i = 1; this.names.has(name); i += 1) name = `${base}_${i}`;
    this.names.add(name);
    return name;
  }

  /** The GraphDef object (tensorweave.GraphDef fields) of every node added so far. */
  toGraphDef() {
    return { node: this.nodes, versions: { producer: 1 } };
  }
}

function shapeProto(shape) {
  if (shape === null || shape === undefined) return { unknown_rank: true };
  return { dim: shape.map((d) => ({ size: d === null || d === undefined ? -1 : d })) };
}

const SCALAR = {
  int: (v) => ({ i: v }),
  float: (v) => ({ f: v }),
  bool: (v) => ({ b: Boolean(v) }),
  string: (v) => ({ s: Buffer.from(String(v)) }),
  type: (v) => ({ type: asEnum(v) }),
  shape: (v) => ({ shape: shapeProto(v) }),
  tensor: (v) => ({ tensor: v }),
  func: (v) => ({ func: { name: String(v) } }),
};
const LIST_FIELD = { int: 'i', float: 'f', bool: 'b', string: 's', type: 'type',
  shape: 'shape', tensor: 'tensor', func: 'func' };

/** An AttrValue object for `value` of the declared attr type ("int", "list(type)", ...). */
function attrValue(type, value) {
  const m = /^list\((\w+)\)$/.exec(type);
  if (!m) {
    const make = SCALAR[type];
    if (!make) throw new TypeError(`attr type ${type} is not supported`);
    return make(value);
  }
  const field = LIST_FIELD[m[1]];
  return { list: { [field]: value.map((v) => Object.values(SCALAR[m[1]](v))[0]) } };
}

function isTensorList(value) {
  return Array.isArray(value) && value.every((v) => v instanceof Tensor);
}

function bindInputs(opDef, inputs, attrs) {
  const args = opDef.input_arg || [];
  if (inputs.length !== args.length) {
    throw new TypeError(`${opDef.name} takes ${args.length} inputs ` +
      `(${args.map((a) => a.name).join(', ')}), got ${inputs.length}`);
  }
  const refs = [];
  args.forEach((arg, i) => {
    const given = inputs[i];
    const list = arg.number_attr || arg.type_list_attr;
    const tensors = list ? given : [given];
    if (!isTensorList(tensors)) {
      throw new TypeError(`${opDef.name}: input ${arg.name} must be ` +
        `${list ? 'a list of Tensors' : 'a Tensor'}`);
    }
    if (arg.number_attr && attrs[arg.number_attr] === undefined) {
      attrs[arg.number_attr] = tensors.length;
    }
    if (arg.type_list_attr && attrs[arg.type_list_attr] === undefined) {
      attrs[arg.type_list_attr] = tensors.map((t) => t.dtype);
    }
    if (arg.type_attr && tensors.length) {
      const seen = attrs[arg.type_attr];
      if (seen !== undefined && asEnum(seen) !== tensors[0].dtype) {
        throw new TypeError(`${opDef.name}: input ${arg.name} is ${dtypeName(tensors[0].dtype)}` +
          ` but ${arg.type_attr} is ${dtypeName(asEnum(seen))}`);
      }
      attrs[arg.type_attr] = tensors[0].dtype;
    }
    refs.push(...tensors.map((t) => t.ref));
  });
  return refs;
}

function outputDtypes(opDef, attrs) {
  const out = [];
  for (const arg of opDef.output_arg || []) {
    if (arg.type_list_attr) {
      out.push(...(attrs[arg.type_list_attr] || []).map(asEnum));
      continue;
    }
    const dtype = arg.type ? asEnum(arg.type) : asEnum(attrs[arg.type_attr]);
    const n = arg.number_attr ? attrs[arg.number_attr] : 1;
    for (let i = 0; i < n; i += 1) out.push(dtype);
  }
  return out;
}

/**
 * Adds a node of `opDef` (an OpList JSON entry) to `graph`; returns its output Tensor (or an
 * array when it has several; the node name when it has none).
 */
function applyOp(graph, opDef, inputs, attrs = {}, name = undefined) {
  const given = { ...attrs };
  const refs = bindInputs(opDef, inputs, given);
  const node = { name: graph.uniqueName(name || opDef.name), op: opDef.name, input: refs,
    attr: {} };
  for (const decl of opDef.attr || []) {
    if (given[decl.name] !== undefined) {
      node.attr[decl.name] = attrValue(decl.type, given[decl.name]);
    } else if (decl.default_value !== undefined) {
      node.attr[decl.name] = decl.default_value;
    } else {
      throw new TypeError(`${opDef.name} needs attr ${decl.name} (${decl.type})`);
    }
  }
  const unknown = Object.keys(given).filter((k) => !(opDef.attr || []).some((a) => a.name === k));
  if (unknown.length) throw new TypeError(`${opDef.name} has no attr ${unknown.join(', ')}`);
  graph.nodes.push(node);
  const dtypes = outputDtypes(opDef, given);
  const outs = dtypes.map((dt, i) => new Tensor(node.name, i, dt));
  if (outs.length === 0) return node.name;
  return outs.length === 1 ? outs[0] : outs;
}

/** The `value` attr (a TensorProto) and dtype of a constant. */
function constAttrs(value, dtype) {
  const dt = dtype || (flatten(value).values.every((v) => typeof v === 'string') ? 'string' :
    'float32');
  return { value: toProto(value, dt), dtype: asEnum(dt) };
}

module.exports = { Graph, Tensor, applyOp, attrValue, constAttrs, shapeProto };
