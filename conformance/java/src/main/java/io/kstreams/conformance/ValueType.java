package io.kstreams.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HexFormat;
import java.util.Locale;
import java.util.UUID;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;

/**
 * The value types of the vector format. A typed value is written as a JSON object with exactly
 * one member whose name is {@link #jsonName()}, e.g. {"string":"a"} or {"long":5}; JSON null is
 * the null value. Each type names the Kafka serde used to turn it into bytes and back.
 */
public enum ValueType {
    STRING("string", Serdes.String()),
    LONG("long", Serdes.Long()),
    INTEGER("integer", Serdes.Integer()),
    SHORT("short", Serdes.Short()),
    DOUBLE("double", Serdes.Double()),
    FLOAT("float", Serdes.Float()),
    BOOLEAN("boolean", Serdes.Boolean()),
    BYTES("bytes", Serdes.ByteArray()),
    UUID_("uuid", Serdes.UUID());

    private static final HexFormat HEX = HexFormat.of();

    private final String jsonName;
    private final Serde<Object> serde;

    @SuppressWarnings("unchecked")
    ValueType(final String jsonName, final Serde<?> serde) {
        this.jsonName = jsonName;
        this.serde = (Serde<Object>) serde;
    }

    /** The member name used in JSON, e.g. "long". */
    public String jsonName() {
        return jsonName;
    }

    /** Looks a type up by its JSON member name. */
    public static ValueType byJsonName(final String name) {
        for (final ValueType t : values()) {
            if (t.jsonName.equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown value type \"" + name + "\"");
    }

    /** Serializes a Java value of this type with the type's Kafka serializer; null gives null. */
    public byte[] serialize(final String topic, final Headers headers, final Object value) {
        if (value == null) {
            return null;
        }
        return serde.serializer().serialize(topic, headers, value);
    }

    /** Deserializes bytes with the type's Kafka deserializer; null gives null. */
    public Object deserialize(final String topic, final Headers headers, final byte[] bytes) {
        if (bytes == null) {
            return null;
        }
        return serde.deserializer().deserialize(topic, headers, bytes);
    }

    /** A typed value read from JSON: its type (null for the null value) and its Java value. */
    public record Typed(ValueType type, Object value) {
        /** Serializes this value; the null value gives null bytes. */
        public byte[] serialize(final String topic, final Headers headers) {
            return type == null ? null : type.serialize(topic, headers, value);
        }
    }

    /** Parses a typed value: JSON null (or a missing node) gives the null value. */
    public static Typed parse(final JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return new Typed(null, null);
        }
        if (!node.isObject() || node.size() != 1) {
            throw new IllegalArgumentException("a typed value is null or an object with one member, got " + node);
        }
        final String name = node.fieldNames().next();
        final ValueType type = byJsonName(name);
        final JsonNode v = node.get(name);
        return new Typed(type, type.fromJson(v));
    }

    private Object fromJson(final JsonNode v) {
        switch (this) {
            case STRING:
                requireText(v);
                return v.textValue();
            case LONG:
                requireIntegral(v);
                if (!v.canConvertToLong()) {
                    throw new IllegalArgumentException("long out of range: " + v);
                }
                return v.longValue();
            case INTEGER:
                requireIntegral(v);
                if (!v.canConvertToInt()) {
                    throw new IllegalArgumentException("integer out of range: " + v);
                }
                return v.intValue();
            case SHORT: {
                requireIntegral(v);
                final long l = v.longValue();
                if (!v.canConvertToLong() || l < Short.MIN_VALUE || l > Short.MAX_VALUE) {
                    throw new IllegalArgumentException("short out of range: " + v);
                }
                return (short) l;
            }
            case DOUBLE:
                return parseFloating(v);
            case FLOAT:
                if (v.isTextual()) {
                    return (float) parseFloating(v);
                }
                requireNumber(v);
                // Parse the decimal text straight to float: going through double could round twice.
                return Float.parseFloat(v.asText());
            case BOOLEAN:
                if (!v.isBoolean()) {
                    throw new IllegalArgumentException("boolean expected, got " + v);
                }
                return v.booleanValue();
            case BYTES:
                requireText(v);
                return HEX.parseHex(v.textValue());
            case UUID_:
                requireText(v);
                return UUID.fromString(v.textValue());
            default:
                throw new IllegalStateException(name());
        }
    }

    private static double parseFloating(final JsonNode v) {
        if (v.isTextual()) {
            switch (v.textValue()) {
                case "NaN":
                    return Double.NaN;
                case "Infinity":
                    return Double.POSITIVE_INFINITY;
                case "-Infinity":
                    return Double.NEGATIVE_INFINITY;
                default:
                    throw new IllegalArgumentException("number, \"NaN\", \"Infinity\" or \"-Infinity\" expected, got " + v);
            }
        }
        requireNumber(v);
        return v.doubleValue();
    }

    private static void requireText(final JsonNode v) {
        if (!v.isTextual()) {
            throw new IllegalArgumentException("string expected, got " + v);
        }
    }

    private static void requireNumber(final JsonNode v) {
        if (!v.isNumber()) {
            throw new IllegalArgumentException("number expected, got " + v);
        }
    }

    private static void requireIntegral(final JsonNode v) {
        if (!v.isIntegralNumber()) {
            throw new IllegalArgumentException("integral number expected, got " + v);
        }
    }

    /** Writes a Java value of this type as a typed JSON value; null gives JSON null. */
    public JsonNode toJson(final Object value) {
        final JsonNodeFactory f = JsonNodeFactory.instance;
        if (value == null) {
            return f.nullNode();
        }
        final ObjectNode o = f.objectNode();
        switch (this) {
            case STRING:
                o.put(jsonName, (String) value);
                break;
            case LONG:
                o.put(jsonName, (Long) value);
                break;
            case INTEGER:
                o.put(jsonName, (Integer) value);
                break;
            case SHORT:
                o.put(jsonName, (Short) value);
                break;
            case DOUBLE: {
                final double d = (Double) value;
                if (Double.isNaN(d) || Double.isInfinite(d)) {
                    o.put(jsonName, nonFinite(d));
                } else {
                    o.put(jsonName, d);
                }
                break;
            }
            case FLOAT: {
                final float x = (Float) value;
                if (Float.isNaN(x) || Float.isInfinite(x)) {
                    o.put(jsonName, nonFinite(x));
                } else {
                    o.put(jsonName, x);
                }
                break;
            }
            case BOOLEAN:
                o.put(jsonName, (Boolean) value);
                break;
            case BYTES:
                o.put(jsonName, HEX.formatHex((byte[]) value));
                break;
            case UUID_:
                o.put(jsonName, value.toString().toLowerCase(Locale.ROOT));
                break;
            default:
                throw new IllegalStateException(name());
        }
        return o;
    }

    private static String nonFinite(final double d) {
        if (Double.isNaN(d)) {
            return "NaN";
        }
        return d > 0 ? "Infinity" : "-Infinity";
    }

    /** Lower-case hex of bytes, or JSON null for null. */
    public static JsonNode hexOrNull(final byte[] bytes) {
        return bytes == null
            ? JsonNodeFactory.instance.nullNode()
            : JsonNodeFactory.instance.textNode(HEX.formatHex(bytes));
    }
}
