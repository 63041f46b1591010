package io.brokerstream.serde.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Map;
import org.apache.avro.Conversions;
import org.apache.avro.LogicalType;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;

/**
 * Records as flat JSON, the same conventions in Java and in the Python tests: decimals as plain
 * strings with their scale ("101.250000"), timestamps and dates as their Avro longs/ints, enums as
 * symbols, bytes as hex, nullable fields as null. Generated classes are reached through Avro
 * binary, so the conversions are exactly those the apps use.
 */
final class JsonRecords {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Conversions.DecimalConversion DECIMAL = new Conversions.DecimalConversion();

  private JsonRecords() {}

  static <T extends SpecificRecord> T fromJson(String line, Class<T> type) throws IOException {
    SpecificData model = SpecificData.getForClass(type);
    Schema schema = model.getSchema(type);
    GenericRecord raw = (GenericRecord) toRaw(JSON.readTree(line), schema);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
    new GenericDatumWriter<GenericRecord>(schema).write(raw, encoder);
    encoder.flush();
    return new SpecificDatumReader<T>(schema, schema, model)
        .read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
  }

  static <T extends SpecificRecord> String toJson(T record) throws IOException {
    Schema schema = record.getSchema();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(out, null);
    new SpecificDatumWriter<T>(schema, SpecificData.getForClass(record.getClass()))
        .write(record, encoder);
    encoder.flush();
    GenericRecord raw =
        new GenericDatumReader<GenericRecord>(schema)
            .read(null, DecoderFactory.get().binaryDecoder(out.toByteArray(), null));
    return JSON.writeValueAsString(fromRaw(raw, schema));
  }

  private static Object toRaw(JsonNode node, Schema schema) {
    switch (schema.getType()) {
      case UNION:
        if (node == null || node.isNull()) {
          return null;
        }
        for (Schema branch : schema.getTypes()) {
          if (branch.getType() != Schema.Type.NULL) {
            return toRaw(node, branch);
          }
        }
        throw new IllegalArgumentException("union without a non-null branch: " + schema);
      case RECORD:
        GenericRecord record = new GenericData.Record(schema);
        for (Schema.Field field : schema.getFields()) {
          JsonNode value = node.get(field.name());
          if (value == null && field.hasDefaultValue()) {
            record.put(field.pos(), GenericData.get().getDefaultValue(field));
          } else {
            record.put(field.pos(), toRaw(value, field.schema()));
          }
        }
        return record;
      case STRING:
        return node.asText();
      case LONG:
        return node.asLong();
      case INT:
        return node.asInt();
      case BOOLEAN:
        return node.asBoolean();
      case DOUBLE:
        return node.asDouble();
      case ENUM:
        return new GenericData.EnumSymbol(schema, node.asText());
      case MAP:
        Map<String, Object> map = new java.util.HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
          Map.Entry<String, JsonNode> e = it.next();
          map.put(e.getKey(), toRaw(e.getValue(), schema.getValueType()));
        }
        return map;
      case BYTES:
        LogicalType logical = schema.getLogicalType();
        if (logical instanceof LogicalTypes.Decimal decimal) {
          BigDecimal value = new BigDecimal(node.asText()).setScale(decimal.getScale());
          return DECIMAL.toBytes(value, schema, decimal);
        }
        return ByteBuffer.wrap(HexFormat.of().parseHex(node.asText()));
      default:
        throw new IllegalArgumentException("unsupported type " + schema.getType());
    }
  }

  private static JsonNode fromRaw(Object value, Schema schema) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    if (value == null) {
      return f.nullNode();
    }
    switch (schema.getType()) {
      case UNION:
        return fromRaw(value, schema.getTypes().get(GenericData.get().resolveUnion(schema, value)));
      case RECORD:
        ObjectNode node = f.objectNode();
        GenericRecord record = (GenericRecord) value;
        for (Schema.Field field : schema.getFields()) {
          node.set(field.name(), fromRaw(record.get(field.pos()), field.schema()));
        }
        return node;
      case STRING:
      case ENUM:
        return f.textNode(value.toString());
      case LONG:
        return f.numberNode((Long) value);
      case INT:
        return f.numberNode((Integer) value);
      case BOOLEAN:
        return f.booleanNode((Boolean) value);
      case DOUBLE:
        return f.numberNode((Double) value);
      case MAP:
        ObjectNode map = f.objectNode();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
          map.set(e.getKey().toString(), fromRaw(e.getValue(), schema.getValueType()));
        }
        return map;
      case BYTES:
        ByteBuffer bytes = ((ByteBuffer) value).duplicate();
        if (schema.getLogicalType() instanceof LogicalTypes.Decimal decimal) {
          return f.textNode(DECIMAL.fromBytes(bytes, schema, decimal).toPlainString());
        }
        byte[] raw = new byte[bytes.remaining()];
        bytes.get(raw);
        return f.textNode(HexFormat.of().formatHex(raw));
      default:
        throw new IllegalArgumentException("unsupported type " + schema.getType());
    }
  }
}
