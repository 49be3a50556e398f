// Cross-check of the Go Avro serde (serde/avro) against Confluent's own JavaScript Avro
// serializer and deserializer (@confluentinc/schemaregistry, with its MockClient registry).
//
//   node crosscheck.js encode OUT.json        encode the cases below with Confluent's
//                                             AvroSerializer; write bytes and canonical values
//   node crosscheck.js decode IN.json OUT.json decode the records of IN.json (written by the
//                                             Go test) with Confluent's AvroDeserializer and
//                                             write their canonical values
//
// Each case is a topic with one schema, registered under "<topic>-value" in a fresh
// MockClient in case order, so schema ids are 1, 2, ... in both languages (the Go test checks
// that its registry assigns the same ids).
//
// Canonical value form (the same in the Go test): null; booleans; int, float and double as
// JSON numbers; long as a decimal string; string and enum as strings; bytes and fixed as
// {"hex": "..."}; arrays as arrays; maps as objects; records as objects of their fields; a
// non-null union value as {"<branch type name>": value}. Logical types are compared in their
// underlying Avro form (Confluent's JavaScript serde does not map them): date as days, time
// and timestamps as integers, decimal as the two's-complement bytes of the unscaled value,
// uuid as its string.
'use strict';

const fs = require('fs');
const avsc = require('avsc');
const { MockClient, AvroSerializer, AvroDeserializer, SerdeType } = require('@confluentinc/schemaregistry');

const hex = (s) => Buffer.from(s, 'hex');

// Longs stay within what avsc encodes exactly: it zig-zags longs in floating point, so a
// negative long below -2^52 comes out wrong (-9007199254740990 was written as +9007199254740990).
//
// The cases. Values are in the form Confluent's serializer takes (avsc's, with unions
// unwrapped where avsc leaves them unwrapped).
const cases = [
  {
    topic: 'primitives',
    schema: {
      type: 'record', name: 'Primitives', namespace: 'io.kstreams.test', fields: [
        { name: 'b', type: 'boolean' },
        { name: 'i', type: 'int' },
        { name: 'l', type: 'long' },
        { name: 'f', type: 'float' },
        { name: 'd', type: 'double' },
        { name: 's', type: 'string' },
        { name: 'y', type: 'bytes' },
      ],
    },
    records: [
      { b: true, i: 0, l: 0, f: 0, d: 0, s: '', y: Buffer.alloc(0) },
      { b: false, i: 2147483647, l: 9007199254740990, f: 1.5, d: 3.141592653589793, s: 'héllo, wörld ✓', y: hex('00ff7f80') },
      { b: true, i: -2147483648, l: -4503599627370495, f: -0.25, d: -1e-300, s: 'a'.repeat(200), y: hex('deadbeef') },
      { b: false, i: -1, l: 1700000000123, f: 3.4028234663852886e38, d: 1.7976931348623157e308, s: '\u0000\u001f"\\', y: hex('01') },
    ],
  },
  {
    topic: 'unions',
    schema: {
      type: 'record', name: 'Unions', namespace: 'io.kstreams.test', fields: [
        { name: 'opt', type: ['null', 'string'], default: null },
        { name: 'multi', type: ['null', 'long', 'string'], default: null },
        { name: 'rev', type: ['string', 'null'] },
        {
          name: 'named', type: ['null',
            { type: 'record', name: 'Inner', fields: [{ name: 'x', type: 'int' }] },
            { type: 'enum', name: 'Color', symbols: ['RED', 'GREEN', 'BLUE'] }], default: null,
        },
        { name: 'wrapped', type: ['int', 'long'] },
      ],
    },
    records: [
      { opt: null, multi: null, rev: 'r', named: null, wrapped: { int: 1 } },
      { opt: 'o', multi: 42, rev: null, named: { x: -5 }, wrapped: { long: 1099511627776 } },
      { opt: '', multi: 'text', rev: '', named: 'GREEN', wrapped: { int: -2147483648 } },
    ],
  },
  {
    topic: 'collections',
    schema: {
      type: 'record', name: 'Collections', namespace: 'io.kstreams.test', fields: [
        { name: 'ints', type: { type: 'array', items: 'int' } },
        { name: 'names', type: { type: 'map', values: 'string' } },
        {
          name: 'points', type: {
            type: 'array', items: {
              type: 'record', name: 'Point', fields: [
                { name: 'x', type: 'double' }, { name: 'label', type: ['null', 'string'], default: null }],
            },
          },
        },
        { name: 'nested', type: { type: 'map', values: { type: 'array', items: ['null', 'long'] } } },
      ],
    },
    records: [
      { ints: [], names: {}, points: [], nested: {} },
      { ints: [1, -1, 64, -65, 2147483647], names: { a: 'x' }, points: [{ x: 0.5, label: null }, { x: -2, label: 'p' }], nested: { k: [1, null, -3] } },
    ],
  },
  {
    topic: 'enums-fixed',
    schema: {
      type: 'record', name: 'EnumsFixed', namespace: 'io.kstreams.test', fields: [
        { name: 'suit', type: { type: 'enum', name: 'Suit', symbols: ['SPADES', 'HEARTS', 'DIAMONDS', 'CLUBS'] } },
        { name: 'md5', type: { type: 'fixed', name: 'MD5', namespace: 'io.kstreams.hash', size: 16 } },
        { name: 'tiny', type: { type: 'fixed', name: 'Tiny', size: 1 } },
      ],
    },
    records: [
      { suit: 'SPADES', md5: hex('d41d8cd98f00b204e9800998ecf8427e'), tiny: hex('00') },
      { suit: 'CLUBS', md5: hex('ffffffffffffffffffffffffffffffff'), tiny: hex('ff') },
    ],
  },
  {
    topic: 'logical',
    schema: {
      type: 'record', name: 'Logical', namespace: 'io.kstreams.test', fields: [
        { name: 'amount', type: { type: 'bytes', logicalType: 'decimal', precision: 9, scale: 2 } },
        { name: 'price', type: { type: 'fixed', name: 'Price', size: 8, logicalType: 'decimal', precision: 18, scale: 3 } },
        { name: 'day', type: { type: 'int', logicalType: 'date' } },
        { name: 'tod', type: { type: 'int', logicalType: 'time-millis' } },
        { name: 'todMicros', type: { type: 'long', logicalType: 'time-micros' } },
        { name: 'at', type: { type: 'long', logicalType: 'timestamp-millis' } },
        { name: 'atMicros', type: { type: 'long', logicalType: 'timestamp-micros' } },
        { name: 'local', type: { type: 'long', logicalType: 'local-timestamp-millis' } },
        { name: 'id', type: { type: 'string', logicalType: 'uuid' } },
        { name: 'maybeAt', type: ['null', { type: 'long', logicalType: 'timestamp-millis' }], default: null },
      ],
    },
    // Decimals are the big-endian two's-complement bytes of the unscaled value, as Java's
    // BigDecimal.unscaledValue().toByteArray() writes them (minimal length for bytes,
    // sign-extended to the size for fixed).
    records: [
      {
        amount: hex('3039'), // 123.45 -> 12345
        price: hex('0000000000000000'), // 0.000
        day: 19675, // 2023-11-14
        tod: 45296789, // 12:34:56.789
        todMicros: 45296789012,
        at: 1700000000123,
        atMicros: 1700000000123456,
        local: 1700000000000,
        id: '123e4567-e89b-12d3-a456-426614174000',
        maybeAt: null,
      },
      {
        amount: hex('9c'), // -1.00 -> -100
        price: hex('fffffffffffffc18'), // -1.000 -> -1000
        day: -1, // 1969-12-31
        tod: 0,
        todMicros: 0,
        at: -1,
        atMicros: 0,
        local: 0,
        id: '00000000-0000-0000-0000-000000000000',
        maybeAt: 0,
      },
      {
        amount: hex('0080'), // 1.28 -> 128 (needs a leading zero byte)
        price: hex('000000000001e240'), // 123.456 -> 123456
        day: 0,
        tod: 86399999,
        todMicros: 86399999999,
        at: 253402300799999, // 9999-12-31T23:59:59.999Z
        atMicros: -2208988800000000, // 1900-01-01T00:00:00Z
        local: 1,
        id: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
        maybeAt: 1700000000123,
      },
    ],
  },
  {
    topic: 'string-key',
    schema: 'string',
    records: ['', 'key-1', 'ключ'],
  },
  {
    topic: 'long-key',
    schema: 'long',
    records: [0, -1, 4294967296, -4503599627370495],
  },
  {
    topic: 'recursive',
    schema: {
      type: 'record', name: 'Node', namespace: 'io.kstreams.test', fields: [
        { name: 'value', type: 'int' },
        { name: 'next', type: ['null', 'Node'], default: null },
      ],
    },
    records: [
      { value: 1, next: null },
      { value: 1, next: { value: 2, next: { value: 3, next: null } } },
    ],
  },
];

// canon returns the canonical form of v, an avsc value of type t (see the header).
function canon(t, v) {
  switch (t.typeName) {
    case 'null': return null;
    case 'boolean': case 'int': case 'float': case 'double': case 'string': case 'enum':
      return v;
    case 'long': return String(v);
    case 'bytes': return { hex: Buffer.from(v).toString('hex') };
    case 'fixed': return { hex: Buffer.from(v).toString('hex') };
    case 'array': return v.map((x) => canon(t.itemsType, x));
    case 'map': {
      const out = {};
      for (const k of Object.keys(v).sort()) out[k] = canon(t.valuesType, v[k]);
      return out;
    }
    case 'record': {
      const out = {};
      for (const f of t.fields) out[f.name] = canon(f.type, v[f.name]);
      return out;
    }
    case 'union:unwrapped': {
      if (v === null || v === undefined) return null;
      const b = t.types.find((b) => b.typeName !== 'null' && b.isValid(v));
      if (!b) throw new Error(`no union branch for ${JSON.stringify(v)}`);
      return { [b.branchName]: canon(b, v) };
    }
    case 'union:wrapped': {
      if (v === null || v === undefined) return null;
      const name = Object.keys(v)[0];
      const b = t.types.find((b) => b.branchName === name);
      return { [name]: canon(b, v[name]) };
    }
    default:
      // A logical type avsc knows nothing about is read as its underlying type.
      if (t.underlyingType) return canon(t.underlyingType, v);
      throw new Error(`unexpected avsc type ${t.typeName}`);
  }
}

// registerAll registers each case's schema (JSON text) under "<topic>-value", in order.
async function registerAll(client, list) {
  const ids = [];
  for (const c of list) {
    ids.push(await client.register(`${c.topic}-value`, { schemaType: 'AVRO', schema: c.text }));
  }
  return ids;
}

async function encode(outPath) {
  const client = new MockClient({ baseURLs: ['mock://'] });
  const ids = await registerAll(client, cases.map((c) => ({ topic: c.topic, text: JSON.stringify(c.schema) })));
  const ser = new AvroSerializer(client, SerdeType.VALUE, { autoRegisterSchemas: false, useLatestVersion: true });
  const out = { generator: 'serde/avro/testdata/js/crosscheck.js encode', cases: [] };
  for (const [i, c] of cases.entries()) {
    const t = avsc.Type.forSchema(c.schema);
    const records = [];
    for (const r of c.records) {
      const bytes = await ser.serialize(c.topic, r);
      records.push({ hex: bytes.toString('hex'), value: canon(t, r) });
    }
    out.cases.push({ topic: c.topic, schema: JSON.stringify(c.schema), id: ids[i], records });
  }
  fs.writeFileSync(outPath, JSON.stringify(out, null, 1) + '\n');
}

async function decode(inPath, outPath) {
  const input = JSON.parse(fs.readFileSync(inPath, 'utf8'));
  const client = new MockClient({ baseURLs: ['mock://'] });
  const ids = await registerAll(client, input.cases.map((c) => ({ topic: c.topic, text: c.schema })));
  const de = new AvroDeserializer(client, SerdeType.VALUE, {});
  const out = { cases: [] };
  for (const [i, c] of input.cases.entries()) {
    if (ids[i] !== c.id) throw new Error(`case ${c.topic}: the mock registry gave id ${ids[i]}, the Go side ${c.id}`);
    const t = avsc.Type.forSchema(JSON.parse(c.schema));
    const records = [];
    for (const r of c.records) {
      const v = await de.deserialize(c.topic, Buffer.from(r.hex, 'hex'));
      records.push({ value: canon(t, v) });
    }
    out.cases.push({ topic: c.topic, records });
  }
  fs.writeFileSync(outPath, JSON.stringify(out, null, 1) + '\n');
}

const [mode, a, b] = process.argv.slice(2);
const run = mode === 'encode' ? encode(a) : mode === 'decode' ? decode(a, b) : Promise.reject(new Error('usage: node crosscheck.js encode OUT | decode IN OUT'));
run.catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
