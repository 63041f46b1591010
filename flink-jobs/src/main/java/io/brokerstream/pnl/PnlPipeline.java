package io.brokerstream.pnl;

import org.apache.flink.streaming.api.datastream.DataStream;

/** The job's dataflow, independent of where inputs come from and outputs go (Kafka, or tests). */
public final class PnlPipeline {
  private PnlPipeline() {}

  /** Position, account and member P&L records, in one stream (each record's scope says which). */
  public static DataStream<PnlRecord> build(DataStream<PnlInput> inputs, PnlSettings settings) {
    DataStream<PnlRecord> positions = inputs
        .keyBy(in -> in.underlyingId)
        .process(new Revaluer(settings.getLong("window.ms"), settings.getDouble("pricing.rate"),
            settings.getInt("pricing.binomial-steps")))
        .name("revalue by underlying").uid("revalue");
    long coalesce = settings.getLong("rollup.coalesce-ms");
    DataStream<PnlRecord> accounts = positions
        .keyBy(r -> r.accountId)
        .process(new RollUp(PnlRecord.Scope.ACCOUNT, coalesce))
        .name("roll up per account").uid("rollup-account");
    DataStream<PnlRecord> members = accounts
        .keyBy(r -> r.memberId)
        .process(new RollUp(PnlRecord.Scope.MEMBER, coalesce))
        .name("roll up per member").uid("rollup-member");
    return positions.union(accounts, members);
  }
}
