package io.brokerstream.streams;

import io.brokerstream.avro.Account;
import io.brokerstream.avro.ApiKey;
import io.brokerstream.avro.DeadLetter;
import io.brokerstream.avro.EquityStart;
import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.avro.Order;
import io.brokerstream.avro.OrderResult;
import io.brokerstream.avro.Position;
import io.brokerstream.avro.PriceTick;
import io.brokerstream.serde.AvroCodec;
import io.brokerstream.serde.AvroSerde;
import io.brokerstream.serde.SchemaRegistry;
import org.apache.avro.specific.SpecificRecord;

/**
 * One Avro serde per record type of the flow, all over the same registry client (and its cache).
 */
public final class AppSerdes {
  private final SchemaRegistry registry;
  private final boolean autoRegister;

  public AppSerdes(SchemaRegistry registry, boolean autoRegister) {
    this.registry = registry;
    this.autoRegister = autoRegister;
  }

  public <T extends SpecificRecord> AvroSerde<T> of(Class<T> type) {
    return new AvroSerde<>(AvroCodec.specific(type, registry, autoRegister));
  }

  public AvroSerde<ApiKey> apiKey() {
    return of(ApiKey.class);
  }

  public AvroSerde<Member> member() {
    return of(Member.class);
  }

  public AvroSerde<Account> account() {
    return of(Account.class);
  }

  public AvroSerde<Instrument> instrument() {
    return of(Instrument.class);
  }

  public AvroSerde<EquityStart> equityStart() {
    return of(EquityStart.class);
  }

  public AvroSerde<PriceTick> tick() {
    return of(PriceTick.class);
  }

  public AvroSerde<Order> order() {
    return of(Order.class);
  }

  public AvroSerde<OrderResult> result() {
    return of(OrderResult.class);
  }

  public AvroSerde<Position> position() {
    return of(Position.class);
  }

  public AvroCodec<PriceTick> tickCodec() {
    return AvroCodec.specific(PriceTick.class, registry, autoRegister);
  }

  public <T extends SpecificRecord> AvroCodec<T> codec(Class<T> type) {
    return AvroCodec.specific(type, registry, autoRegister);
  }

  public AvroSerde<DeadLetter> deadLetter() {
    return of(DeadLetter.class);
  }

  public AvroCodec<DeadLetter> deadLetters() {
    return AvroCodec.specific(DeadLetter.class, registry, autoRegister);
  }
}
