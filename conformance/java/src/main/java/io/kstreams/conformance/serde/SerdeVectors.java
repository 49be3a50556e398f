package io.kstreams.conformance.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.kstream.WindowedSerdes;
import org.apache.kafka.streams.kstream.internals.SessionWindow;
import org.apache.kafka.streams.kstream.internals.TimeWindow;

/**
 * Writes the serde conformance vectors of kstreams-go: for every built-in Kafka serde, values with
 * the bytes Java's serializer writes, byte inputs with the value Java's deserializer reads, and
 * byte inputs Java's deserializer rejects. One JSON object per line:
 *
 * <pre>
 * {"id":"Long/min", "serde":"Long", "window_size":"100" (time-windowed only), "topic":"t",
 *  "kind":"roundtrip" | "deserialize" | "reject",
 *  "hex":  bytes as lower-case hex, or null for null bytes,
 *  "value": the value (roundtrip: serialized to hex and read back from it;
 *           deserialize: what hex deserializes to),
 *  "reserialized_hex": (deserialize only) the bytes Java writes for that value again,
 *  "error": (reject only) the exception class and message}
 * </pre>
 *
 * Serde names: String Long Integer Short Double Float Boolean ByteArray Bytes UUID Void,
 * List&lt;Inner&gt; (Serdes.ListSerde(ArrayList.class, inner)), TimeWindowed&lt;Inner&gt; (with
 * window_size in ms), SessionWindowed&lt;Inner&gt;. Value forms: String as a JSON string; Long,
 * Integer, Short as decimal strings; Double and Float as the hex of doubleToRawLongBits /
 * floatToRawIntBits; Boolean as a JSON boolean; ByteArray and Bytes as hex; UUID as its
 * toString; Void and null as JSON null; lists as arrays of element values; windowed keys as
 * {"key":K,"start":"ms","end":"ms"}.
 *
 * <p>Usage: SerdeVectors OUTPUT.jsonl
 */
public final class SerdeVectors {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final HexFormat HEX = HexFormat.of();
    private static final String TOPIC = "serde-topic";

    private final List<ObjectNode> out = new ArrayList<>();

    private SerdeVectors() {
    }

    /** A serde under test with the way its values are written as JSON. */
    private record Kind<T>(String name, Serde<T> serde, Function<T, JsonNode> repr, Long windowSize) {
        Kind(final String name, final Serde<T> serde, final Function<T, JsonNode> repr) {
            this(name, serde, repr, null);
        }

        JsonNode json(final T v) {
            return v == null ? NODES.nullNode() : repr.apply(v);
        }
    }

    // ---- value representations ----

    private static JsonNode str(final String s) {
        return NODES.textNode(s);
    }

    private static JsonNode dec(final long v) {
        return NODES.textNode(Long.toString(v));
    }

    private static JsonNode hex(final byte[] b) {
        return b == null ? NODES.nullNode() : NODES.textNode(HEX.formatHex(b));
    }

    private static byte[] unhex(final String s) {
        return HEX.parseHex(s);
    }

    private static final Kind<String> STRING = new Kind<>("String", Serdes.String(), SerdeVectors::str);
    private static final Kind<Long> LONG = new Kind<>("Long", Serdes.Long(), SerdeVectors::dec);
    private static final Kind<Integer> INTEGER = new Kind<>("Integer", Serdes.Integer(), v -> dec(v));
    private static final Kind<Short> SHORT = new Kind<>("Short", Serdes.Short(), v -> dec(v));
    private static final Kind<Double> DOUBLE = new Kind<>("Double", Serdes.Double(),
        v -> str(String.format("%016x", Double.doubleToRawLongBits(v))));
    private static final Kind<Float> FLOAT = new Kind<>("Float", Serdes.Float(),
        v -> str(String.format("%08x", Float.floatToRawIntBits(v))));
    private static final Kind<Boolean> BOOLEAN = new Kind<>("Boolean", Serdes.Boolean(), v -> NODES.booleanNode(v));
    private static final Kind<byte[]> BYTE_ARRAY = new Kind<>("ByteArray", Serdes.ByteArray(), SerdeVectors::hex);
    private static final Kind<Bytes> BYTES = new Kind<>("Bytes", Serdes.Bytes(), v -> hex(v.get()));
    private static final Kind<UUID> UUID_KIND = new Kind<>("UUID", Serdes.UUID(), v -> str(v.toString()));
    private static final Kind<Void> VOID = new Kind<>("Void", Serdes.Void(), v -> NODES.nullNode());

    private static <T> Kind<List<T>> list(final Kind<T> inner) {
        @SuppressWarnings("unchecked")
        final Serde<List<T>> serde = Serdes.ListSerde(ArrayList.class, inner.serde());
        return new Kind<>("List<" + inner.name() + ">", serde, l -> {
            final ArrayNode a = NODES.arrayNode();
            for (final T e : l) {
                a.add(inner.json(e));
            }
            return a;
        });
    }

    private static <K> Function<Windowed<K>, JsonNode> windowedRepr(final Kind<K> inner) {
        return w -> {
            final ObjectNode o = NODES.objectNode();
            o.set("key", inner.json(w.key()));
            o.set("start", dec(w.window().start()));
            o.set("end", dec(w.window().end()));
            return o;
        };
    }

    private static <K> Kind<Windowed<K>> timeWindowed(final Kind<K> inner, final long size) {
        return new Kind<>("TimeWindowed<" + inner.name() + ">",
            new WindowedSerdes.TimeWindowedSerde<>(inner.serde(), size), windowedRepr(inner), size);
    }

    private static <K> Kind<Windowed<K>> sessionWindowed(final Kind<K> inner) {
        return new Kind<>("SessionWindowed<" + inner.name() + ">",
            new WindowedSerdes.SessionWindowedSerde<>(inner.serde()), windowedRepr(inner));
    }

    // ---- vector emitters ----

    private ObjectNode base(final String id, final Kind<?> k, final String kind) {
        final ObjectNode o = NODES.objectNode();
        o.put("id", k.name() + (k.windowSize() == null ? "" : "(" + k.windowSize() + ")") + "/" + id);
        o.put("serde", k.name());
        if (k.windowSize() != null) {
            o.set("window_size", dec(k.windowSize()));
        }
        o.put("topic", TOPIC);
        o.put("kind", kind);
        return o;
    }

    /** Serializes v and checks Java reads the same value back. */
    private <T> void roundtrip(final String id, final Kind<T> k, final T v) {
        final byte[] b = k.serde().serializer().serialize(TOPIC, new RecordHeaders(), v);
        final T back = k.serde().deserializer().deserialize(TOPIC, new RecordHeaders(), b);
        final JsonNode vj = k.json(v);
        if (!vj.equals(k.json(back))) {
            throw new IllegalStateException(k.name() + "/" + id + ": " + vj + " reads back as " + k.json(back));
        }
        final ObjectNode o = base(id, k, "roundtrip");
        o.set("hex", hex(b));
        o.set("value", vj);
        out.add(o);
    }

    /** Deserializes input (which need not be what Java writes) and records the value. */
    private <T> void deserialize(final String id, final Kind<T> k, final byte[] input) {
        final T v = k.serde().deserializer().deserialize(TOPIC, new RecordHeaders(), input);
        final ObjectNode o = base(id, k, "deserialize");
        o.set("hex", hex(input));
        o.set("value", k.json(v));
        o.set("reserialized_hex", hex(v == null ? null : k.serde().serializer().serialize(TOPIC, new RecordHeaders(), v)));
        out.add(o);
    }

    private <T> void deserialize(final String id, final Kind<T> k, final String inputHex) {
        deserialize(id, k, unhex(inputHex));
    }

    /** Records that Java's deserializer throws for input. */
    private <T> void reject(final String id, final Kind<T> k, final byte[] input) {
        final T v;
        try {
            v = k.serde().deserializer().deserialize(TOPIC, new RecordHeaders(), input);
        } catch (final RuntimeException e) {
            final ObjectNode o = base(id, k, "reject");
            o.set("hex", hex(input));
            o.put("error", e.getClass().getName() + ": " + e.getMessage());
            out.add(o);
            return;
        }
        throw new IllegalStateException(k.name() + "/" + id + ": expected an exception, got " + k.json(v));
    }

    private <T> void reject(final String id, final Kind<T> k, final String inputHex) {
        reject(id, k, unhex(inputHex));
    }

    private static byte[] utf8(final String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    // ---- the vectors ----

    private void strings() {
        final Kind<String> k = STRING;
        roundtrip("null", k, null);
        roundtrip("empty", k, "");
        roundtrip("ascii", k, "hello world");
        roundtrip("nul", k, "a\u0000b");
        roundtrip("2byte", k, "\u00e9");
        roundtrip("3byte", k, "\u20ac");
        roundtrip("4byte-emoji", k, "\uD83D\uDE00");
        roundtrip("mixed", k, "Gr\u00fc\u00dfe, \u4e16\u754c \uD83C\uDF0D!");
        roundtrip("max-bmp", k, "\uFFFF\uFFFD");
        roundtrip("max-codepoint", k, new String(Character.toChars(0x10FFFF)));
        // Ill-formed UTF-8: Java substitutes U+FFFD.
        deserialize("invalid-ff", k, "ff");
        deserialize("invalid-lone-continuation", k, "80");
        deserialize("invalid-overlong-nul", k, "c080");
        deserialize("invalid-overlong-3", k, "e08080");
        deserialize("invalid-truncated-3", k, "e282");
        deserialize("invalid-truncated-3-then-ascii", k, "e28241");
        deserialize("invalid-bad-second", k, "e228a1");
        deserialize("invalid-surrogate", k, "eda080");
        deserialize("invalid-surrogate-pair-cesu", k, "eda0bdedb880");
        deserialize("invalid-surrogate-then-ascii", k, "eda041");
        deserialize("invalid-surrogate-truncated", k, "eda0");
        deserialize("invalid-ed-lone", k, "ed41");
        deserialize("valid-ed-9f", k, "ed9fbf");
        deserialize("invalid-e1-cont-then-ascii", k, "e18041");
        deserialize("invalid-e0-80-truncated", k, "e080");
        deserialize("invalid-f1-truncated-3", k, "f1808041");
        deserialize("invalid-f4-8f-ok-truncated", k, "f48f");
        deserialize("invalid-truncated-4", k, "f09f98");
        deserialize("invalid-above-10ffff", k, "f4908080");
        deserialize("invalid-f5", k, "f5808080");
        deserialize("invalid-5byte", k, "f888808080");
        deserialize("invalid-in-middle", k, "61ff62c3");
        deserialize("invalid-c1", k, "c1bf");
        deserialize("invalid-e0-9f", k, "e09f80");
        deserialize("invalid-f0-8f", k, "f08f8080");
        deserialize("invalid-truncated-4-at-2", k, "f0a0");
    }

    private void longs() {
        final Kind<Long> k = LONG;
        for (final long v : new long[] {0, 1, -1, 42, -42, 255, 256, Integer.MAX_VALUE, Integer.MIN_VALUE,
            1L << 32, 0x0102030405060708L, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1}) {
            roundtrip(Long.toString(v), k, v);
        }
        roundtrip("null", k, null);
        reject("len0", k, "");
        reject("len1", k, "01");
        reject("len7", k, "01020304050607");
        reject("len9", k, "010203040506070809");
    }

    private void integers() {
        final Kind<Integer> k = INTEGER;
        for (final int v : new int[] {0, 1, -1, 42, -42, 256, 65536, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            roundtrip(Integer.toString(v), k, v);
        }
        roundtrip("null", k, null);
        reject("len0", k, "");
        reject("len3", k, "010203");
        reject("len5", k, "0102030405");
        reject("len8", k, "0000000000000001");
    }

    private void shorts() {
        final Kind<Short> k = SHORT;
        for (final short v : new short[] {0, 1, -1, 255, 256, -256, Short.MAX_VALUE, Short.MIN_VALUE}) {
            roundtrip(Short.toString(v), k, v);
        }
        roundtrip("null", k, null);
        reject("len0", k, "");
        reject("len1", k, "01");
        reject("len3", k, "010203");
        reject("len4", k, "00000001");
    }

    private void doubles() {
        final Kind<Double> k = DOUBLE;
        final double[] vs = {0.0, -0.0, 1.0, -1.0, 1.5, -2.25, 0.1, Math.PI, Double.MIN_VALUE, -Double.MIN_VALUE,
            Double.MIN_NORMAL, Double.MAX_VALUE, -Double.MAX_VALUE, Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY, Double.NaN, 1e300, 9007199254740993.0};
        for (final double v : vs) {
            roundtrip(Double.toString(v) + (v == 0 && 1 / v < 0 ? "(neg)" : ""), k, v);
        }
        roundtrip("null", k, null);
        deserialize("nan-signalling", k, "7ff0000000000001");
        deserialize("nan-negative", k, "fff8000000000000");
        deserialize("nan-max-payload", k, "7fffffffffffffff");
        deserialize("nan-negative-payload", k, "fff0000000000abc");
        reject("len0", k, "");
        reject("len4", k, "3ff00000");
        reject("len7", k, "3ff00000000000");
        reject("len9", k, "3ff000000000000000");
    }

    private void floats() {
        final Kind<Float> k = FLOAT;
        final float[] vs = {0.0f, -0.0f, 1.0f, -1.0f, 1.5f, 0.1f, (float) Math.PI, Float.MIN_VALUE, Float.MIN_NORMAL,
            Float.MAX_VALUE, -Float.MAX_VALUE, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, 16777217f};
        for (final float v : vs) {
            roundtrip(Float.toString(v) + (v == 0 && 1 / v < 0 ? "(neg)" : ""), k, v);
        }
        roundtrip("null", k, null);
        deserialize("nan-signalling", k, "7f800001");
        deserialize("nan-negative", k, "ffc00000");
        deserialize("nan-max-payload", k, "7fffffff");
        deserialize("nan-negative-payload", k, "ff800abc");
        reject("len0", k, "");
        reject("len2", k, "3f80");
        reject("len3", k, "3f8000");
        reject("len5", k, "3f80000000");
        reject("len8", k, "3ff0000000000000");
    }

    private void booleans() {
        final Kind<Boolean> k = BOOLEAN;
        roundtrip("true", k, true);
        roundtrip("false", k, false);
        roundtrip("null", k, null);
        reject("len0", k, "");
        reject("len2", k, "0001");
        reject("byte02", k, "02");
        reject("byteff", k, "ff");
        reject("byte80", k, "80");
    }

    private void byteArrays() {
        for (final String h : new String[] {"", "00", "01", "ff", "0102ff", "000000000000000000", "48656c6c6f"}) {
            roundtrip("hex-" + h, BYTE_ARRAY, unhex(h));
            roundtrip("hex-" + h, BYTES, Bytes.wrap(unhex(h)));
        }
        roundtrip("null", BYTE_ARRAY, null);
        roundtrip("null", BYTES, null);
    }

    private void uuids() {
        final Kind<UUID> k = UUID_KIND;
        roundtrip("zero", k, new UUID(0, 0));
        roundtrip("max", k, new UUID(-1, -1));
        roundtrip("v4", k, UUID.fromString("123e4567-e89b-42d3-a456-426614174000"));
        roundtrip("msb-only", k, new UUID(0x0102030405060708L, 0));
        roundtrip("lsb-only", k, new UUID(0, 0x0102030405060708L));
        roundtrip("null", k, null);
        deserialize("uppercase", k, utf8("123E4567-E89B-12D3-A456-426614174000"));
        deserialize("mixed-case", k, utf8("aBcDeF01-2345-6789-AbCd-Ef0123456789"));
        deserialize("short-fields", k, utf8("1-2-3-4-5"));
        deserialize("plus-sign", k, utf8("+1-+2-+3-+4-+5"));
        deserialize("long-fields-truncated", k, utf8("123456789-12345-12345-12345-1234567890abc"
            .substring(0, 36)));
        deserialize("leading-zeros", k, utf8("000000001-0-0-0-00000000000000000001"));
        deserialize("field-long-max", k, utf8("7fffffffffffffff-0-0-0-1"));
        deserialize("fullwidth-digits", k, utf8("\uFF11-\uFF12-\uFF13-\uFF14-\uFF15"));
        deserialize("fullwidth-letters", k, utf8("\uFF21\uFF42-c-d-e-f"));
        deserialize("arabic-indic-digits", k, utf8("\u0661\u0669-\u0662-\u0663-\u0664-\u0665"));
        reject("empty", k, utf8(""));
        reject("garbage", k, utf8("not-a-uuid"));
        reject("too-long", k, utf8("123e4567-e89b-42d3-a456-4266141740000"));
        reject("three-dashes", k, utf8("1-2-3-4"));
        reject("five-dashes", k, utf8("1-2-3-4-5-6"));
        reject("empty-field", k, utf8("1--3-4-5"));
        reject("non-hex", k, utf8("g23e4567-e89b-42d3-a456-426614174000"));
        reject("lone-plus", k, utf8("+-2-3-4-5"));
        reject("field-overflow", k, utf8("8000000000000000-0-0-0-0"));
        reject("field-17-digits", k, utf8("10000000000000000-0-0-0-0"));
        reject("space", k, utf8(" 23e4567-e89b-42d3-a456-426614174000"));
        reject("invalid-utf8", k, unhex("ff"));
        reject("supplementary-digit", k, utf8("\uD835\uDFCE-0-0-0-0"));
    }

    private void voids() {
        roundtrip("null", VOID, null);
        reject("empty", VOID, "");
        reject("byte00", VOID, "00");
    }

    @SafeVarargs
    @SuppressWarnings("varargs")
    private static <T> List<T> listOf(final T... vs) {
        return new ArrayList<>(Arrays.asList(vs));
    }

    private void lists() {
        final Kind<List<Long>> longs = list(LONG);
        roundtrip("null", longs, null);
        roundtrip("empty", longs, listOf());
        roundtrip("one", longs, listOf(1L));
        roundtrip("three", longs, listOf(1L, 2L, 3L));
        roundtrip("min-max", longs, listOf(Long.MIN_VALUE, Long.MAX_VALUE, -1L));
        roundtrip("only-null", longs, listOf((Long) null));
        roundtrip("nulls-between", longs, listOf(1L, null, 3L, null));
        roundtrip("all-null", longs, listOf(null, null, null));
        deserialize("variable-layout-for-fixed-inner", longs, "01" + "00000002" + "00000008" + "0000000000000007"
            + "ffffffff");
        deserialize("trailing-bytes", longs, "00" + "00000000" + "00000001" + "0000000000000005" + "abcdef");
        deserialize("null-index-out-of-range", longs, "00" + "00000001" + "00000063" + "00000001"
            + "0000000000000005");
        deserialize("null-index-duplicate", longs, "00" + "00000002" + "00000000" + "00000000" + "00000002"
            + "0000000000000005");
        deserialize("negative-null-index", longs, "00" + "00000001" + "ffffffff" + "00000001" + "0000000000000009");
        reject("empty", longs, "");
        reject("flag2", longs, "02" + "00000000");
        reject("flagff", longs, "ff" + "00000000");
        reject("truncated-null-count", longs, "00" + "0000");
        reject("negative-null-count", longs, "00" + "ffffffff" + "00000000");
        reject("null-count-too-large", longs, "00" + "00000003" + "00000000" + "00000000");
        reject("truncated-null-indexes", longs, "00" + "00000002" + "00000000" + "00000000");
        reject("missing-size", longs, "00" + "00000000");
        reject("negative-size", longs, "00" + "00000000" + "ffffffff");
        reject("size-too-large", longs, "00" + "00000000" + "00000100");
        reject("truncated-element", longs, "00" + "00000000" + "00000002" + "0000000000000001" + "00000000");
        reject("variable-negative-length", longs, "01" + "00000001" + "fffffffe");
        reject("variable-length-too-large", longs, "01" + "00000001" + "00000100");
        reject("variable-inner-wrong-length", longs, "01" + "00000001" + "00000004" + "00000001");
        reject("variable-truncated-entry", longs, "01" + "00000001" + "00000008" + "000000");

        final Kind<List<Integer>> ints = list(INTEGER);
        roundtrip("values", ints, listOf(0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE));
        roundtrip("with-null", ints, listOf(null, 5));
        roundtrip("empty", ints, listOf());
        final Kind<List<Short>> shorts = list(SHORT);
        roundtrip("values", shorts, listOf((short) 1, (short) -1, Short.MIN_VALUE));
        roundtrip("with-null", shorts, listOf((short) 7, null));
        final Kind<List<Float>> floats = list(FLOAT);
        roundtrip("values", floats, listOf(1.5f, -0.0f, Float.NaN, Float.NEGATIVE_INFINITY, null));
        final Kind<List<Double>> doubles = list(DOUBLE);
        roundtrip("values", doubles, listOf(0.1, -0.0, Double.NaN, Double.POSITIVE_INFINITY, null, Double.MIN_VALUE));
        final Kind<List<UUID>> uuids = list(UUID_KIND);
        roundtrip("values", uuids, listOf(UUID.fromString("123e4567-e89b-42d3-a456-426614174000"), null,
            new UUID(0, 0)));
        reject("inner-rejects", uuids, "00" + "00000000" + "00000001" + HEX.formatHex(utf8("x".repeat(36))));

        final Kind<List<String>> strings = list(STRING);
        roundtrip("null", strings, null);
        roundtrip("empty", strings, listOf());
        roundtrip("values", strings, listOf("a", "", "\uD83D\uDE00", "Gr\u00fc\u00dfe"));
        roundtrip("with-nulls", strings, listOf(null, "x", null));
        roundtrip("only-empty", strings, listOf(""));
        deserialize("trailing-bytes", strings, "01" + "00000001" + "00000001" + "61" + "ff");
        reject("constant-layout", strings, "00" + "00000000" + "00000000");
        reject("empty", strings, "");

        final Kind<List<byte[]>> arrays = list(BYTE_ARRAY);
        roundtrip("values", arrays, listOf(new byte[0], null, unhex("0102"), unhex("ff")));
        final Kind<List<Bytes>> bytes = list(BYTES);
        roundtrip("values", bytes, listOf(Bytes.wrap(unhex("00")), null, Bytes.wrap(new byte[0])));
        final Kind<List<Boolean>> bools = list(BOOLEAN);
        roundtrip("values", bools, listOf(true, false, null, true));
        reject("inner-rejects", bools, "01" + "00000001" + "00000001" + "02");
    }

    private void windowed() {
        final Kind<Windowed<String>> ts = timeWindowed(STRING, 100);
        roundtrip("null", ts, null);
        roundtrip("a@0", ts, new Windowed<>("a", new TimeWindow(0, 100)));
        roundtrip("empty-key", ts, new Windowed<>("", new TimeWindow(5, 105)));
        roundtrip("emoji@1700000000000", ts, new Windowed<>("\uD83D\uDE00k",
            new TimeWindow(1700000000000L, 1700000000100L)));
        roundtrip("end-truncated-to-max", ts, new Windowed<>("k",
            new TimeWindow(Long.MAX_VALUE - 50, Long.MAX_VALUE)));
        deserialize("empty-bytes-is-null", ts, "");
        reject("len7", ts, "00000000000000");
        reject("negative-start", ts, "61" + "ffffffffffffff9c");
        final Kind<Windowed<String>> tsMax = timeWindowed(STRING, Long.MAX_VALUE);
        roundtrip("start0", tsMax, new Windowed<>("k", new TimeWindow(0, Long.MAX_VALUE)));
        roundtrip("start10-overflows", tsMax, new Windowed<>("k", new TimeWindow(10, Long.MAX_VALUE)));
        final Kind<Windowed<String>> tsZero = timeWindowed(STRING, 0);
        reject("size0", tsZero, "61" + "000000000000000a");
        final Kind<Windowed<String>> tsNeg = timeWindowed(STRING, -5);
        reject("negative-size-end-before-start", tsNeg, "61" + "000000000000000a");
        deserialize("negative-size-start0-end-max", tsNeg, "61" + "0000000000000000");
        final Kind<Windowed<Long>> tl = timeWindowed(LONG, 60000);
        roundtrip("long-key", tl, new Windowed<>(-7L, new TimeWindow(120000, 180000)));
        reject("inner-rejects", tl, "010203" + "0000000000000000");
        final Kind<Windowed<byte[]>> tb = timeWindowed(BYTE_ARRAY, 10);
        roundtrip("empty-key", tb, new Windowed<>(new byte[0], new TimeWindow(3, 13)));
        roundtrip("bytes-key", tb, new Windowed<>(unhex("00ff"), new TimeWindow(0, 10)));

        final Kind<Windowed<String>> ss = sessionWindowed(STRING);
        roundtrip("null", ss, null);
        roundtrip("a@0/0", ss, new Windowed<>("a", new SessionWindow(0, 0)));
        roundtrip("k@10/20", ss, new Windowed<>("k", new SessionWindow(10, 20)));
        roundtrip("empty-key", ss, new Windowed<>("", new SessionWindow(1, 2)));
        roundtrip("emoji-max", ss, new Windowed<>("\uD83D\uDE00", new SessionWindow(5, Long.MAX_VALUE)));
        deserialize("empty-bytes-is-null", ss, "");
        reject("len15", ss, "000000000000000000000000000000");
        reject("end-before-start", ss, "61" + "0000000000000005" + "0000000000000006");
        reject("negative-start", ss, "61" + "0000000000000005" + "ffffffffffffffff");
        final Kind<Windowed<Long>> sl = sessionWindowed(LONG);
        roundtrip("long-key", sl, new Windowed<>(Long.MIN_VALUE, new SessionWindow(100, 200)));
        reject("inner-rejects", sl, "01" + "0000000000000005" + "0000000000000001");
        final Kind<Windowed<Integer>> si = sessionWindowed(INTEGER);
        roundtrip("int-key", si, new Windowed<>(258, new SessionWindow(7, 7)));
    }

    private void run(final Path path) throws IOException {
        strings();
        longs();
        integers();
        shorts();
        doubles();
        floats();
        booleans();
        byteArrays();
        uuids();
        voids();
        lists();
        windowed();
        try (Writer w = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
            for (final ObjectNode o : out) {
                w.write(JSON.writeValueAsString(o));
                w.write('\n');
            }
        }
    }

    public static void main(final String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: SerdeVectors OUTPUT.jsonl");
            System.exit(2);
        }
        new SerdeVectors().run(Path.of(args[0]));
    }
}
