package io.brokerstream.pricing;

/** The standard normal distribution, accurate to about 1e-15 (W. J. Cody's rational erfc). */
public final class Normal {
  private static final double SQRT_2 = Math.sqrt(2.0);
  private static final double INV_SQRT_2PI = 1.0 / Math.sqrt(2.0 * Math.PI);

  private Normal() {}

  public static double pdf(double x) {
    return INV_SQRT_2PI * Math.exp(-0.5 * x * x);
  }

  public static double cdf(double x) {
    return 0.5 * erfc(-x / SQRT_2);
  }

  /** Complementary error function (Cody 1969), relative error below 1e-14 over the real line. */
  static double erfc(double x) {
    double ax = Math.abs(x);
    double result;
    if (ax < 0.5) {
      double t = x * x;
      double top =
          (((0.185777706184603153 * t + 3.16112374387056560) * t + 113.864154151050156) * t
                      + 377.485237685302021)
                  * t
              + 3209.37758913846947;
      double bot =
          (((t + 23.6012909523441209) * t + 244.024637934444173) * t + 1282.61652607737228) * t
              + 2844.23683343917062;
      return 1.0 - x * top / bot;
    } else if (ax < 4.0) {
      double top =
          (((((((2.15311535474403846e-8 * ax + 0.564188496988670089) * ax + 8.88314979438837594)
                                                          * ax
                                                      + 66.1191906371416295)
                                                  * ax
                                              + 298.635138197400131)
                                          * ax
                                      + 881.952221241769090)
                                  * ax
                              + 1712.04761263407058)
                          * ax
                      + 2051.07837782607147)
                  * ax
              + 1230.33935479799725;
      double bot =
          (((((((ax + 15.7449261107098347) * ax + 117.693950891312499) * ax + 537.181101862009858)
                                                  * ax
                                              + 1621.38957456669019)
                                          * ax
                                      + 3290.79923573345963)
                                  * ax
                              + 4362.61909014324716)
                          * ax
                      + 3439.36767414372164)
                  * ax
              + 1230.33935480374942;
      result = Math.exp(-ax * ax) * top / bot;
    } else {
      double z = 1.0 / (ax * ax);
      double top =
          ((((0.0163153871373020978 * z + 0.305326634961232344) * z + 0.360344899949804439) * z
                              + 0.125781726111229246)
                          * z
                      + 0.0160837851487422766)
                  * z
              + 6.58749161529837803e-4;
      double bot =
          ((((z + 2.56852019228982242) * z + 1.87295284992346725) * z + 0.527905102951428412) * z
                      + 0.0605183413124413191)
                  * z
              + 0.00233520497626869185;
      result = Math.exp(-ax * ax) / ax * (0.564189583547755073 - z * top / bot);
    }
    return x < 0 ? 2.0 - result : result;
  }
}
