package io.brokerstream.serde;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import org.apache.avro.Schema;

/**
 * The text of a schema as it goes to the registry. Classes generated with {@code stringType=String}
 * carry an {@code avro.java.string} property on every string; it means nothing to other languages,
 * and leaving it in would make the Java text differ from the Python tools' text for the same
 * schema, registering a needless second version of every subject.
 */
public final class RegistrySchemas {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String JAVA_STRING = "avro.java.string";

  private RegistrySchemas() {}

  public static Schema withoutJavaProperties(Schema schema) {
    try {
      JsonNode tree = strip(JSON.readTree(schema.toString()));
      return new Schema.Parser().parse(JSON.writeValueAsString(tree));
    } catch (IOException e) {
      throw new SerdeException("cannot normalise schema " + schema.getFullName(), e);
    }
  }

  private static JsonNode strip(JsonNode node) {
    if (node instanceof ArrayNode array) {
      for (int i = 0; i < array.size(); i++) {
        array.set(i, strip(array.get(i)));
      }
      return array;
    }
    if (node instanceof ObjectNode object) {
      object.remove(JAVA_STRING);
      Iterator<Map.Entry<String, JsonNode>> fields = object.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> field = fields.next();
        field.setValue(strip(field.getValue()));
      }
      // {"type": "string"} with nothing else is just "string"
      if (object.size() == 1 && object.get("type") instanceof TextNode primitive) {
        return primitive;
      }
    }
    return node;
  }
}
