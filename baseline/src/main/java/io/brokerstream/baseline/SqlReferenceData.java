package io.brokerstream.baseline;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.rules.AccountEntry;
import io.brokerstream.rules.ReferenceData;

/**
 * The reference data of one order as the lookups and the risk query found it, for the shared {@code
 * OrderDecider}. It answers only for the order's own account, member, instrument and underlying:
 * the decider asks for nothing else (a different member means MEMBER_MISMATCH before it is asked).
 */
final class SqlReferenceData implements ReferenceData {
  private final ReferenceLookups.Found found;
  private final String memberId;
  private final long depositedCash;

  SqlReferenceData(ReferenceLookups.Found found, String memberId, long depositedCash) {
    this.found = found;
    this.memberId = memberId;
    this.depositedCash = depositedCash;
  }

  @Override
  public AccountEntry account(String accountId) {
    AccountEntry a = found.account();
    return a != null && a.accountId().equals(accountId) ? a : null;
  }

  @Override
  public Member member(String id) {
    if (!id.equals(memberId)) {
      throw new IllegalStateException(
          "the decider asked for member " + id + ", the order came under " + memberId);
    }
    return found.member();
  }

  @Override
  public Instrument instrument(String instrumentId) {
    ReferenceLookups.Priced p = found.instrument();
    return p != null && p.instrument().getInstrumentId().equals(instrumentId)
        ? p.instrument()
        : null;
  }

  @Override
  public Double volatility(String equityId) {
    return found.instrument() == null ? null : found.instrument().volatility();
  }

  @Override
  public Long priceMicros(String equityId) {
    return found.instrument() == null ? null : found.instrument().priceMicros();
  }

  @Override
  public long depositedCash(String id) {
    return depositedCash;
  }
}
