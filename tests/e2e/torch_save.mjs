// What a vLLM client sends as `prompt_embeds`, built without Python: torch.save's archive of one
// float32 tensor (an independent writer of the format src/formats/torch_tensor_file.h reads), and
// the rows of a GGUF model's F32 token_embd.weight, which the model's embedding lookup yields.
import { readFileSync } from 'node:fs';

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(bytes) {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = crcTable[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// The fields a local header and a central-directory entry share, from byte `at` of `header`:
// CRC-32, compressed and uncompressed sizes (equal: STORED), name length.
function putEntryFields(header, at, data, nameBytes) {
  header.writeUInt32LE(crc32(data), at);
  header.writeUInt32LE(data.length, at + 4);
  header.writeUInt32LE(data.length, at + 8);
  header.writeUInt16LE(nameBytes.length, at + 12);
}

// A STORED ZIP of [name, Buffer] entries (no padding: readers take any data offset).
function zip(entries) {
  const locals = [];
  const directory = [];
  let offset = 0;
  for (const [name, data] of entries) {
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    putEntryFields(local, 14, data, nameBytes);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    putEntryFields(central, 16, data, nameBytes);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    directory.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const directoryBytes = Buffer.concat(directory);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directoryBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directoryBytes, end]);
}

// The pickle (protocol 2) of _rebuild_tensor_v2(storage, 0, shape, stride, False, OrderedDict())
// with a FloatStorage of `numel` elements under key "0", as torch.save writes it.
function tensorPickle(shape, numel) {
  const bytes = [0x80, 2];
  let memo = 0;
  const put = () => bytes.push(0x71, memo++);  // BINPUT
  const text = (s) => bytes.push(...Buffer.from(s));
  const global = (module, name) => { bytes.push(0x63); text(`${module}\n${name}\n`); put(); };
  const string = (s) => {
    const length = Buffer.alloc(4);
    length.writeUInt32LE(s.length);
    bytes.push(0x58, ...length);  // BINUNICODE
    text(s);
    put();
  };
  const int = (n) => {
    if (n < 256) return bytes.push(0x4b, n);  // BININT1
    if (n < 65536) return bytes.push(0x4d, n & 0xff, n >> 8);  // BININT2
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    return bytes.push(0x4a, ...b);  // BININT
  };
  const ints = (values) => {
    bytes.push(0x28);  // MARK
    values.forEach(int);
    bytes.push(0x74);  // TUPLE
    put();
  };
  global('torch._utils', '_rebuild_tensor_v2');
  bytes.push(0x28, 0x28);  // MARK (the arguments), MARK (the persistent id)
  string('storage');
  global('torch', 'FloatStorage');
  string('0');
  string('cpu');
  int(numel);
  bytes.push(0x74);  // TUPLE
  put();
  bytes.push(0x51);  // BINPERSID
  int(0);
  ints(shape);
  ints(shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1)));
  bytes.push(0x89);  // NEWFALSE
  global('collections', 'OrderedDict');
  bytes.push(0x29, 0x52);  // EMPTY_TUPLE, REDUCE
  put();
  bytes.push(0x74);
  put();
  bytes.push(0x52);
  put();
  bytes.push(0x2e);  // STOP
  return Buffer.from(bytes);
}

// torch.save(torch.tensor(values).reshape(shape)) of a float32 tensor, base64-encoded as vLLM's
// clients send it.
export function torchSaveBase64(shape, values) {
  const storage = Buffer.from(Float32Array.from(values).buffer);
  return zip([
    ['archive/data.pkl', tensorPickle(shape, values.length)],
    ['archive/byteorder', Buffer.from('little')],
    ['archive/data/0', storage],
    ['archive/version', Buffer.from('3\n')],
  ]).toString('base64');
}

// The rows of token_embd.weight (F32) for `ids`: [ids.length * hidden] and hidden.
export function ggufTokenEmbeddings(path, ids) {
  const file = readFileSync(path);
  let at = 8;
  const u32 = () => { const v = file.readUInt32LE(at); at += 4; return v; };
  const u64 = () => { const v = Number(file.readBigUInt64LE(at)); at += 8; return v; };
  const str = () => { const n = u64(); const s = file.toString('utf8', at, at + n); at += n; return s; };
  const scalarBytes = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const skip = (type) => {
    if (type === 8) return void str();
    if (type === 9) {
      const itemType = u32();
      const count = u64();
      for (let i = 0; i < count; i++) skip(itemType);
      return undefined;
    }
    at += scalarBytes[type];
    return undefined;
  };
  const numTensors = u64();
  const numKeys = u64();
  let alignment = 32;
  for (let i = 0; i < numKeys; i++) {
    const key = str();
    const type = u32();
    if (key === 'general.alignment') { alignment = u32(); continue; }
    skip(type);
  }
  let embedding;
  for (let i = 0; i < numTensors; i++) {
    const name = str();
    const dims = Array.from({ length: u32() }, u64);
    const type = u32();
    const offset = u64();
    if (name === 'token_embd.weight') embedding = { dims, type, offset };
  }
  if (!embedding || embedding.type !== 0) throw new Error('no F32 token_embd.weight');
  const dataStart = Math.ceil(at / alignment) * alignment;
  const hidden = embedding.dims[0];
  const values = [];
  for (const id of ids) {
    const row = dataStart + embedding.offset + id * hidden * 4;
    for (let j = 0; j < hidden; j++) values.push(file.readFloatLE(row + 4 * j));
  }
  return { values, hidden };
}
