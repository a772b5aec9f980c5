/**
 * Just enough of ONNX's protobuf encoding to cut a model's graph into consecutive parts: read the
 * nodes (type, inputs, outputs, integer attributes) and write a model holding a run of them, with
 * the initializers they use, one named input and one named output. Every other field of the model
 * (opsets, IR version) is copied byte for byte; the parts' own bytes are never re-encoded.
 * streaming-embedding.ts uses it; a model it cannot read is run whole as before.
 */

/** One protobuf field: its number and, for a length-delimited one, its bytes. */
interface Field {
  readonly no: number
  readonly wire: number
  /** The field's encoded bytes, tag included (to copy it unchanged). */
  readonly raw: Uint8Array
  /** Length-delimited: the payload; varint: undefined. */
  readonly body?: Uint8Array
  readonly value?: bigint
}

export interface OnnxNode {
  readonly opType: string
  readonly inputs: readonly string[]
  readonly outputs: readonly string[]
  /** Integer-list attributes (strides, kernel_shape, pads…) by name. */
  readonly ints: ReadonlyMap<string, readonly number[]>
  readonly raw: Uint8Array
}

export interface OnnxModel {
  readonly nodes: readonly OnnxNode[]
  readonly inputs: readonly string[]
  readonly outputs: readonly string[]
  /** Initializers by name, each its encoded TensorProto field. */
  readonly initializers: ReadonlyMap<string, Uint8Array>
  /** The model's fields other than its graph, encoded. */
  readonly rest: readonly Uint8Array[]
}

// ModelProto.graph; GraphProto node, initializer, input, output; NodeProto input, output, op_type,
// attribute; AttributeProto name, ints; ValueInfoProto name, type; TypeProto tensor_type;
// TypeProto.Tensor elem_type (1 is float).
const MODEL_GRAPH = 7
const GRAPH = { node: 1, initializer: 5, input: 11, output: 12 }
const NODE = { input: 1, output: 2, opType: 4, attribute: 5 }
const ATTRIBUTE = { name: 1, ints: 8 }
const TENSOR_NAME = 8
const VALUE_INFO = { name: 1, type: 2 }

export function parseOnnx(bytes: Uint8Array): OnnxModel {
  const model = fields(bytes)
  const graph = model.find((f) => f.no === MODEL_GRAPH)?.body
  if (!graph) throw new Error('no graph in the model')
  const g = fields(graph)
  const initializers = new Map<string, Uint8Array>()
  for (const f of g) {
    if (f.no !== GRAPH.initializer || !f.body) continue
    initializers.set(text(fields(f.body).find((t) => t.no === TENSOR_NAME)?.body), f.raw)
  }
  const valueName = (f: Field) =>
    text(fields(f.body ?? new Uint8Array()).find((v) => v.no === VALUE_INFO.name)?.body)
  return {
    nodes: g.filter((f) => f.no === GRAPH.node).map(node),
    inputs: g.filter((f) => f.no === GRAPH.input).map(valueName),
    outputs: g.filter((f) => f.no === GRAPH.output).map(valueName),
    initializers,
    rest: model.filter((f) => f.no !== MODEL_GRAPH).map((f) => f.raw),
  }
}

/**
 * A model of `nodes` (a run of the graph's, in order) reading the float tensor `input` and giving
 * `output`, with no declared shapes: the runtime infers them from the input it is given.
 */
export function subModel(
  model: OnnxModel,
  nodes: readonly OnnxNode[],
  input: string,
  output: string,
): Uint8Array {
  const used = new Set(nodes.flatMap((n) => n.inputs))
  const parts: Uint8Array[] = nodes.map((n) => n.raw)
  for (const [name, raw] of model.initializers) if (used.has(name)) parts.push(raw)
  parts.push(lengthField(GRAPH.input, floatValue(input)))
  parts.push(lengthField(GRAPH.output, floatValue(output)))
  return concat([...model.rest, lengthField(MODEL_GRAPH, concat(parts))])
}

function node(f: Field): OnnxNode {
  const n = fields(f.body ?? new Uint8Array())
  const ints = new Map<string, number[]>()
  for (const a of n.filter((x) => x.no === NODE.attribute)) {
    const af = fields(a.body ?? new Uint8Array())
    const values: number[] = []
    for (const v of af.filter((x) => x.no === ATTRIBUTE.ints)) {
      if (v.value !== undefined) values.push(Number(BigInt.asIntN(64, v.value)))
      else if (v.body) values.push(...packedInts(v.body))
    }
    ints.set(text(af.find((x) => x.no === ATTRIBUTE.name)?.body), values)
  }
  const strings = (no: number) => n.filter((x) => x.no === no).map((x) => text(x.body))
  return {
    opType: strings(NODE.opType)[0] ?? '',
    inputs: strings(NODE.input),
    outputs: strings(NODE.output),
    ints,
    raw: f.raw,
  }
}

/** A ValueInfoProto: the name, a float tensor of any shape. */
function floatValue(name: string): Uint8Array {
  const tensorType = varintField(1, 1n)
  const type = lengthField(1, tensorType)
  return concat([
    lengthField(VALUE_INFO.name, new TextEncoder().encode(name)),
    lengthField(VALUE_INFO.type, type),
  ])
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = []
  let at = 0
  while (at < buf.length) {
    const start = at
    const [tag, afterTag] = varint(buf, at)
    at = afterTag
    const no = Number(tag >> 3n)
    const wire = Number(tag & 7n)
    if (wire === 0) {
      const [value, next] = varint(buf, at)
      at = next
      out.push({ no, wire, value, raw: buf.subarray(start, at) })
    } else if (wire === 2) {
      const [len, next] = varint(buf, at)
      const end = next + Number(len)
      if (end > buf.length) throw new Error('a field runs past the end of the model')
      out.push({ no, wire, body: buf.subarray(next, end), raw: buf.subarray(start, end) })
      at = end
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4
      out.push({ no, wire, raw: buf.subarray(start, at) })
    } else {
      throw new Error(`protobuf wire type ${wire} is not one ONNX uses`)
    }
  }
  if (at !== buf.length) throw new Error('a field runs past the end of the model')
  return out
}

function varint(buf: Uint8Array, from: number): [bigint, number] {
  let value = 0n
  let shift = 0n
  for (let at = from; at < buf.length && shift < 70n; at++) {
    const b = buf[at] ?? 0
    value |= BigInt(b & 0x7f) << shift
    if ((b & 0x80) === 0) return [value, at + 1]
    shift += 7n
  }
  throw new Error('a varint runs past the end of the model')
}

function packedInts(body: Uint8Array): number[] {
  const out: number[] = []
  for (let at = 0; at < body.length; ) {
    const [v, next] = varint(body, at)
    out.push(Number(BigInt.asIntN(64, v)))
    at = next
  }
  return out
}

function encodeVarint(v: bigint): number[] {
  const out: number[] = []
  let x = BigInt.asUintN(64, v)
  do {
    const b = Number(x & 0x7fn)
    x >>= 7n
    out.push(x > 0n ? b | 0x80 : b)
  } while (x > 0n)
  return out
}

function varintField(no: number, v: bigint): Uint8Array {
  return Uint8Array.from([...encodeVarint(BigInt(no << 3)), ...encodeVarint(v)])
}

function lengthField(no: number, body: Uint8Array): Uint8Array {
  const head = [...encodeVarint(BigInt((no << 3) | 2)), ...encodeVarint(BigInt(body.length))]
  return concat([Uint8Array.from(head), body])
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(parts)
}

function text(b: Uint8Array | undefined): string {
  return b ? new TextDecoder().decode(b) : ''
}
