// Cross-check of the Go Protobuf and JSON Schema serdes (serde/protobuf, serde/jsonschema)
// against Confluent's own JavaScript serializers and deserializers
// (@confluentinc/schemaregistry: ProtobufSerializer/Deserializer, JsonSerializer/Deserializer)
// talking to the same real schema registry (Apicurio Registry's Confluent-compatible API).
//
//   node pbjson.js protobuf IN.json OUT.json
//   node pbjson.js json IN.json OUT.json
//
// IN is written by the Go test: the registry URL and, per case, the topic (its subject
// "<topic>-value" already holds the schema the Go serde registered), the records as JSON
// text (protobuf: the proto3 JSON mapping), and the bytes the Go serde wrote for them.
// For each record, Confluent's serializer encodes the JSON with the subject's latest
// schema (use.latest.version, no auto-registration), so it writes with the schema id the Go
// serde wrote with, and its deserializer decodes the Go bytes. OUT holds, per record, the
// JavaScript bytes (hex) and the JavaScript decoding of the Go bytes as JSON text (or the
// error each side raised).
//
// Protobuf needs two stand-ins, both because Confluent's JavaScript client asks the
// registry for schemas in the "serialized" format (a base64 FileDescriptorProto), which
// Apicurio does not serve (it returns the .proto text):
//  - the messages are built from descriptors the Go test compiled from the registered .proto
//    text (case.descriptorSet, a base64 FileDescriptorSet), since JavaScript has no .proto
//    compiler here; the serializer takes the schema id from the registry;
//  - the deserializer's schema look-ups (by id, and of references by subject and version)
//    are answered with those descriptors (case.serialized: id or "subject/version" ->
//    base64 FileDescriptorProto); everything else goes to the registry.
'use strict';

const fs = require('fs');
const { fromBinary, fromJson, toJson, createFileRegistry } = require('@bufbuild/protobuf');
const { FileDescriptorSetSchema } = require('@bufbuild/protobuf/wkt');
const {
  SchemaRegistryClient, SerdeType,
  ProtobufSerializer, ProtobufDeserializer, JsonSerializer, JsonDeserializer,
} = require('@confluentinc/schemaregistry');

function errText(e) {
  return String((e && e.message) || e);
}

async function protobuf(input) {
  const client = new SchemaRegistryClient({ baseURLs: [input.url] });
  const out = { cases: [] };
  for (const c of input.cases) {
    const set = fromBinary(FileDescriptorSetSchema, Buffer.from(c.descriptorSet, 'base64'));
    const registry = createFileRegistry(set);
    const desc = registry.getMessage(c.message);
    if (!desc) throw new Error(`case ${c.topic}: no message ${c.message} in the descriptor set`);
    const ser = new ProtobufSerializer(client, SerdeType.VALUE, { autoRegisterSchemas: false, useLatestVersion: true, registry });
    // The deserializer's view of the registry: serialized-format look-ups from the case.
    const served = new Proxy(client, {
      get(target, prop) {
        if (prop === 'getBySubjectAndId') {
          return async (subject, id) => {
            const s = c.serialized[String(id)];
            if (!s) throw new Error(`no serialized schema for id ${id}`);
            return s;
          };
        }
        if (prop === 'getSchemaMetadata') {
          return async (subject, version) => {
            const s = c.serialized[`${subject}/${version}`];
            if (!s) throw new Error(`no serialized schema for ${subject} version ${version}`);
            return s;
          };
        }
        const v = target[prop];
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const de = new ProtobufDeserializer(served, SerdeType.VALUE, {});
    const records = [];
    for (const r of c.records) {
      const rec = {};
      try {
        const msg = fromJson(desc, JSON.parse(r.json), { registry });
        rec.hex = (await ser.serialize(c.topic, msg)).toString('hex');
      } catch (e) {
        rec.serializeError = errText(e);
      }
      try {
        const msg = await de.deserialize(c.topic, Buffer.from(r.goHex, 'hex'));
        rec.decodedType = msg.$typeName;
        rec.decoded = JSON.stringify(toJson(registry.getMessage(msg.$typeName), msg, { registry }));
      } catch (e) {
        rec.deserializeError = errText(e);
      }
      records.push(rec);
    }
    out.cases.push({ topic: c.topic, records });
  }
  return out;
}

async function json(input) {
  const client = new SchemaRegistryClient({ baseURLs: [input.url] });
  const ser = new JsonSerializer(client, SerdeType.VALUE, { autoRegisterSchemas: false, useLatestVersion: true, validate: true });
  const de = new JsonDeserializer(client, SerdeType.VALUE, { validate: true });
  const out = { cases: [] };
  for (const c of input.cases) {
    const records = [];
    for (const r of c.records) {
      const rec = {};
      try {
        rec.hex = (await ser.serialize(c.topic, JSON.parse(r.json))).toString('hex');
      } catch (e) {
        rec.serializeError = errText(e);
      }
      try {
        rec.decoded = JSON.stringify(await de.deserialize(c.topic, Buffer.from(r.goHex, 'hex')));
      } catch (e) {
        rec.deserializeError = errText(e);
      }
      records.push(rec);
    }
    out.cases.push({ topic: c.topic, records });
  }
  return out;
}

const [mode, inPath, outPath] = process.argv.slice(2);
const run = { protobuf, json }[mode];
if (!run || !inPath || !outPath) {
  console.error('usage: node pbjson.js protobuf|json IN.json OUT.json');
  process.exit(2);
}
run(JSON.parse(fs.readFileSync(inPath, 'utf8')))
  .then((out) => fs.writeFileSync(outPath, JSON.stringify(out, null, 1) + '\n'))
  .catch((e) => { console.error(e.stack || String(e)); process.exit(1); });
