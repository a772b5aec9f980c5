/**
 * Just enough of ONNX's protobuf encoding to cut a model's graph into consecutive parts: read the
 * nodes (type, inputs, outputs, integer attributes) and write a model holding a run of them, with
 * the initializers they use, one named input and one named output. Every other field of the model
 * (opsets, IR version) is copied byte for byte; the parts' own bytes are never re-encoded.
 * streaming-embedding.ts uses it; a model it cannot read is run whole as before. It also reads a
 * model's declared inputs (`graphInputs`), so the runtime knows the embedding model's input
 * without making a session of it (runtime.ts).
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

/** One input the graph declares: its name and shape (a symbolic dimension is its name). */
export interface OnnxInput {
  readonly name: string
  readonly shape: readonly (number | string)[]
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
// TypeProto.Tensor shape; TensorShapeProto dim; Dimension dim_value, dim_param.
const TENSOR_TYPE = { shape: 2 }
const SHAPE_DIM = 1
const DIM = { value: 1, param: 2 }

export function parseOnnx(bytes: Uint8Array): OnnxModel {
  const model = fields(bytes)
  const graph = model.find((f) => f.no === MODEL_GRAPH)?.body
  if (!graph) throw new Error('no graph in the model')
  const g = fields(graph)
  const initializers = new Map<string, Uint8Array>()
  for (const f of g) {
    if (f.no !== GRAPH.initializer || !f.body) continue
    initializers.set(text(tensorName(f.body)), f.raw)
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
 * The inputs a caller feeds the model, with their declared shapes, as a session reports them: the
 * graph's declared inputs that are not initializers (an older model declares those too). Reads
 * the graph's own fields only, not the weights (a millisecond, not the ~10 of `parseOnnx`).
 */
export function graphInputs(bytes: Uint8Array): OnnxInput[] {
  const graph = fields(bytes).find((f) => f.no === MODEL_GRAPH)?.body
  if (!graph) throw new Error('no graph in the model')
  const g = fields(graph)
  const declared = g.filter((f) => f.no === GRAPH.input).map(input)
  if (declared.length <= 1) return declared
  const initializers = new Set(
    g
      .filter((f) => f.no === GRAPH.initializer)
      .map((f) => text(tensorName(f.body ?? new Uint8Array()))),
  )
  return declared.filter((i) => !initializers.has(i.name))
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

/** A TensorProto's name, read without decoding the fields after it (its weights, mostly). */
function tensorName(tensor: Uint8Array): Uint8Array | undefined {
  for (let at = 0; at < tensor.length; ) {
    const [f, next] = field(tensor, at)
    if (f.no === TENSOR_NAME) return f.body
    at = next
  }
  return undefined
}

/**
 * A declared input: its name and its tensor's dimensions, each a number, its symbolic name, or ''
 * when it has neither.
 */
function input(f: Field): OnnxInput {
  const v = fields(f.body ?? new Uint8Array())
  const type = fields(v.find((x) => x.no === VALUE_INFO.type)?.body ?? new Uint8Array())
  const tensor = fields(type.find((x) => x.no === 1)?.body ?? new Uint8Array())
  const shape = tensor.find((x) => x.no === TENSOR_TYPE.shape)?.body
  const dims = fields(shape ?? new Uint8Array()).filter((x) => x.no === SHAPE_DIM)
  return {
    name: text(v.find((x) => x.no === VALUE_INFO.name)?.body),
    shape: dims.map((d) => {
      const dim = fields(d.body ?? new Uint8Array())
      const value = dim.find((x) => x.no === DIM.value)?.value
      if (value !== undefined) return Number(BigInt.asIntN(64, value))
      return text(dim.find((x) => x.no === DIM.param)?.body)
    }),
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
    const [f, next] = field(buf, at)
    out.push(f)
    at = next
  }
  return out
}

/** The field at `at` in `buf`, and where the next one starts. */
function field(buf: Uint8Array, at: number): [Field, number] {
  const start = at
  const [tag, afterTag] = varint(buf, at)
  const no = Number(tag >> 3n)
  const wire = Number(tag & 7n)
  if (wire === 0) {
    const [value, next] = varint(buf, afterTag)
    return [{ no, wire, value, raw: buf.subarray(start, next) }, next]
  }
  if (wire === 2) {
    const [len, next] = varint(buf, afterTag)
    const end = next + Number(len)
    if (end > buf.length) throw new Error('a field runs past the end of the model')
    return [{ no, wire, body: buf.subarray(next, end), raw: buf.subarray(start, end) }, end]
  }
  if (wire === 1 || wire === 5) {
    const end = afterTag + (wire === 1 ? 8 : 4)
    if (end > buf.length) throw new Error('a field runs past the end of the model')
    return [{ no, wire, raw: buf.subarray(start, end) }, end]
  }
  throw new Error(`protobuf wire type ${wire} is not one ONNX uses`)
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
