package io.brokerstream.pnl;

import io.brokerstream.pricing.MarketModel;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;

/** The job's dataflow, independent of where inputs come from and outputs go (Kafka, or tests). */
public final class PnlPipeline {
  private PnlPipeline() {}

  /**
   * The job's outputs: the marks of held instruments straight from the revaluation (one record per
   * equity, what the database sync reads too), and the roll-ups.
   */
  public record Outputs(DataStream<EquityMarksRecord> marks, DataStream<PnlRecord> rollUps) {}

  /** Marks leave by their own sinks, chained to the revaluation: no network hop between. */
  public static Outputs build(DataStream<PnlInput> inputs, PnlSettings settings) {
    MarketModel market = MarketModel.load(); // the order flow's model too: one definition
    SingleOutputStreamOperator<EquityMarksRecord> marks =
        inputs
            .keyBy(in -> in.underlyingId)
            .process(
                new Revaluer(
                    settings.getLong("window.ms"),
                    settings.getInt("window.phases"),
                    settings.getLong("rollup.delta-flush-ms"),
                    market.pricer()))
            // the uid names the state layout: a savepoint of an older layout (per-position map
            // states; roll-ups without the summed losses, which deltas from a restored state would
            // leave short by what was lost before) is refused rather than restored: deploy --fresh
            // rebuilds the state from the compacted inputs
            .name("revalue by underlying")
            .uid("revalue-books-losses");
    long coalesce = settings.getLong("rollup.coalesce-ms");
    SingleOutputStreamOperator<PnlRecord> accounts =
        marks
            .getSideOutput(Revaluer.ACCOUNT_DELTAS)
            .keyBy(d -> d.accountId)
            .process(new RollUp(PnlRecord.Scope.ACCOUNT, coalesce))
            .name("roll up per account")
            .uid("rollup-account-losses");
    DataStream<PnlRecord> members =
        accounts
            .getSideOutput(RollUp.MEMBER_DELTAS)
            .keyBy(d -> d.memberId)
            .process(
                new RollUp(PnlRecord.Scope.MEMBER, coalesce, settings.getLong("rollup.refresh-ms")))
            .name("roll up per member")
            .uid("rollup-member-losses");
    return new Outputs(marks, accounts.union(members));
  }
}
