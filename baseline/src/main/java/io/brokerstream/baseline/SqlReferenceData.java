package io.brokerstream.baseline;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;
import io.brokerstream.rules.AccountEntry;
import io.brokerstream.rules.MemberMarks;
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
  private final long unrealizedLoss;

  SqlReferenceData(ReferenceLookups.Found found, String memberId, long depositedCash) {
    this(found, memberId, depositedCash, 0);
  }

  /** With the member's losses at the marks, read in the same transaction (so never stale). */
  SqlReferenceData(
      ReferenceLookups.Found found, String memberId, long depositedCash, long unrealizedLoss) {
    this.found = found;
    this.memberId = memberId;
    this.depositedCash = depositedCash;
    this.unrealizedLoss = Math.min(0, unrealizedLoss);
  }

  @Override
  public MemberMarks marks(String id) {
    return unrealizedLoss == 0 ? null : new MemberMarks(unrealizedLoss, 1, Long.MAX_VALUE);
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
  public Long priceTimeMs(String equityId) {
    return found.instrument() == null ? null : found.instrument().priceTimeMs();
  }

  @Override
  public long depositedCash(String id) {
    return depositedCash;
  }
}
