package io.brokerstream.serde;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DatumReader;
import org.apache.avro.io.DatumWriter;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecord;

/**
 * Avro records in the Confluent wire format: magic byte 0, the writer schema's registry id as a
 * 4-byte big-endian int, then Avro binary. Decoding resolves the writer schema (fetched once per
 * id) against the reader schema, so readers keep working across compatible schema changes.
 *
 * <p>Thread-safe: Kafka Streams shares one serde between its threads.
 */
public final class AvroCodec<T> {
  public static final byte MAGIC = 0;
  public static final int HEADER = 5;

  private final SchemaRegistry registry;
  private final Schema readerSchema; // null: read with the writer's schema (generic records)
  private final Schema registeredSchema; // readerSchema as the registry sees it
  private final GenericData model;
  private final boolean autoRegister;
  private final Map<String, Integer> idBySubject = new ConcurrentHashMap<>();
  private final Map<Integer, DatumReader<T>> readerById = new ConcurrentHashMap<>();
  private final DatumWriter<T> writer;
  private final ThreadLocal<Buffers> buffers = ThreadLocal.withInitial(Buffers::new);

  private final DatumReader<T> fastReader; // for data written with exactly our schema

  private AvroCodec(
      SchemaRegistry registry,
      Schema readerSchema,
      GenericData model,
      boolean autoRegister,
      DatumWriter<T> fastWriter,
      DatumReader<T> fastReader) {
    this.registry = registry;
    this.readerSchema = readerSchema;
    this.model = model;
    this.autoRegister = autoRegister;
    this.writer =
        fastWriter != null
            ? fastWriter
            : readerSchema == null ? null : newWriter(readerSchema, model);
    this.fastReader = fastReader;
    this.registeredSchema =
        readerSchema == null ? null : RegistrySchemas.withoutJavaProperties(readerSchema);
  }

  /**
   * Records of a generated class; writes its schema, reads any compatible writer schema into it.
   */
  public static <T extends SpecificRecord> AvroCodec<T> specific(
      Class<T> type, SchemaRegistry registry, boolean autoRegister) {
    SpecificData model = SpecificData.getForClass(type);
    return new AvroCodec<>(
        registry,
        model.getSchema(type),
        model,
        autoRegister,
        FastCoders.writer(type),
        FastCoders.reader(type));
  }

  /** Records of a generated class through Avro's generic machinery only (tests compare the two). */
  static <T extends SpecificRecord> AvroCodec<T> specificWithoutFastCoders(
      Class<T> type, SchemaRegistry registry) {
    SpecificData model = SpecificData.getForClass(type);
    return new AvroCodec<>(registry, model.getSchema(type), model, true, null, null);
  }

  /** Generic records read with their writer's schema: for tools that handle any topic. */
  public static AvroCodec<GenericRecord> generic(SchemaRegistry registry) {
    return new AvroCodec<>(registry, null, GenericData.get(), true, null, null);
  }

  /**
   * The registry id of this codec's schema under a subject, for writers that frame records
   * themselves.
   */
  public int schemaId(String subject) {
    if (readerSchema == null) {
      throw new IllegalStateException("a generic codec writes each record's own schema");
    }
    return idBySubject.computeIfAbsent(subject, s -> resolveId(s, registeredSchema));
  }

  /** Encodes for a subject (TopicNameStrategy: {@code <topic>-value} or {@code <topic>-key}). */
  public byte[] encode(String subject, T record) {
    if (record == null) {
      return null;
    }
    Schema schema = readerSchema != null ? readerSchema : ((GenericRecord) record).getSchema();
    int id =
        readerSchema != null
            ? schemaId(subject)
            : resolveId(subject, RegistrySchemas.withoutJavaProperties(schema));
    DatumWriter<T> datumWriter = writer != null ? writer : newWriter(schema, model);
    Buffers b = buffers.get();
    b.out.reset();
    b.out.write(MAGIC);
    b.out.write(id >>> 24);
    b.out.write(id >>> 16);
    b.out.write(id >>> 8);
    b.out.write(id);
    try {
      b.encoder = EncoderFactory.get().directBinaryEncoder(b.out, b.encoder);
      datumWriter.write(record, b.encoder);
      b.encoder.flush();
    } catch (IOException | RuntimeException e) {
      throw new SerdeException(
          "cannot encode " + schema.getFullName() + " for " + subject + ": " + e.getMessage(), e);
    }
    return b.out.toByteArray();
  }

  public T decode(byte[] data) {
    if (data == null) {
      return null;
    }
    int id = schemaId(data);
    DatumReader<T> reader = readerById.computeIfAbsent(id, this::newReader);
    Buffers b = buffers.get();
    try {
      b.decoder = DecoderFactory.get().binaryDecoder(data, HEADER, data.length - HEADER, b.decoder);
      T record = reader.read(null, b.decoder);
      if (!b.decoder.isEnd()) {
        throw new SerdeException("trailing bytes after a record of schema id " + id);
      }
      return record;
    } catch (IOException | RuntimeException e) {
      if (e instanceof SerdeException se) {
        throw se;
      }
      throw new SerdeException("cannot decode a record of schema id " + id + ": " + e, e);
    }
  }

  /**
   * The schema id a framed record carries; fails on anything that is not the Confluent wire format.
   */
  public static int schemaId(byte[] data) {
    if (data.length < HEADER) {
      throw new SerdeException("not the Confluent wire format: " + data.length + " bytes");
    }
    if (data[0] != MAGIC) {
      throw new SerdeException("not the Confluent wire format: magic byte " + data[0]);
    }
    return ByteBuffer.wrap(data, 1, 4).getInt();
  }

  private int resolveId(String subject, Schema schema) {
    return autoRegister ? registry.register(subject, schema) : registry.lookup(subject, schema);
  }

  @SuppressWarnings("unchecked")
  private DatumReader<T> newReader(int id) {
    Schema writerSchema = registry.schemaById(id);
    if (fastReader != null && writerSchema.equals(registeredSchema)) {
      return fastReader;
    }
    if (readerSchema == null) {
      return (DatumReader<T>)
          new GenericDatumReader<GenericRecord>(writerSchema, writerSchema, model);
    }
    return new SpecificDatumReader<>(writerSchema, readerSchema, (SpecificData) model);
  }

  @SuppressWarnings("unchecked")
  private static <T> DatumWriter<T> newWriter(Schema schema, GenericData model) {
    return model instanceof SpecificData sd
        ? new SpecificDatumWriter<>(schema, sd)
        : (DatumWriter<T>) new GenericDatumWriter<>(schema, model);
  }

  private static final class Buffers {
    final ByteArrayOutputStream out = new ByteArrayOutputStream(256);
    BinaryEncoder encoder;
    BinaryDecoder decoder;
  }
}
