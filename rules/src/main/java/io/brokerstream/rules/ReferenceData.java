package io.brokerstream.rules;

import io.brokerstream.avro.Instrument;
import io.brokerstream.avro.Member;

/** The reference data an order is checked against; null where the thing is unknown. */
public interface ReferenceData {
  AccountEntry account(String accountId);

  Member member(String memberId);

  Instrument instrument(String instrumentId);

  /** Annualised volatility of an equity (from its start data). */
  Double volatility(String equityId);

  /** The latest price of an equity, in micros; null before its first tick. */
  Long priceMicros(String equityId);

  /** Cash deposited in all the member's accounts, in micros. */
  long depositedCash(String memberId);

  /**
   * The event time (ms, as the broker took it) of the equity's latest price; null when not known
   * (its age is then not checked).
   */
  default Long priceTimeMs(String equityId) {
    return null;
  }

  /** Why the equity (and every option on it) is halted; null while it trades. */
  default String halt(String equityId) {
    return null;
  }

  /** What the P&L flow last said of the member's open positions; null when it said nothing. */
  default MemberMarks marks(String memberId) {
    return null;
  }
}
