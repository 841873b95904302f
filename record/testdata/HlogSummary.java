// HlogSummary prints what HdrHistogram's Java implementation says about an
// interval log: the sum of all its intervals, then a copy corrected for
// coordinated omission for each expected interval given. knee's tests run it
// (record/java_test.go) and compare knee's numbers with its own.
//
// Usage: java -cp <dir>:hdrhistogram.jar HlogSummary FILE UNIT_NANOS [INTERVAL_US ...]
//
// UNIT_NANOS is the size of one logged value in nanoseconds: 1000 for knee's
// microsecond logs; any other unit is converted to microseconds bucket by
// bucket, each bucket's lowest value truncated and clamped to 1 us .. 1 h, as
// knee reads foreign logs.
import java.util.Locale;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.HdrHistogram.HistogramLogReader;

public class HlogSummary {
    static final long HIGHEST_US = 3_600_000_000L;
    static final double[] PCTS = {0, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100};

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: HlogSummary FILE UNIT_NANOS [INTERVAL_US ...]");
            System.exit(2);
        }
        long unitNanos = Long.parseLong(args[1]);
        Histogram sum = new Histogram(1, HIGHEST_US, 3);
        HistogramLogReader reader = new HistogramLogReader(args[0]);
        EncodableHistogram e;
        while ((e = reader.nextIntervalHistogram()) != null) {
            Histogram h = (Histogram) e;
            if (unitNanos == 1000) {
                sum.add(h);
                continue;
            }
            for (HistogramIterationValue v : h.recordedValues()) {
                long us = h.lowestEquivalentValue(v.getValueIteratedTo()) * unitNanos / 1000;
                us = Math.max(1, Math.min(HIGHEST_US, us));
                sum.recordValueWithCount(us, v.getCountAtValueIteratedTo());
            }
        }
        print("raw", sum);
        for (int i = 2; i < args.length; i++) {
            long interval = Long.parseLong(args[i]);
            print("corrected=" + interval, sum.copyCorrectedForCoordinatedOmission(interval));
        }
    }

    // One line: name, count, mean (decimal and its IEEE bits), min, max and
    // the value at each percentile, all in microseconds.
    static void print(String name, Histogram h) {
        StringBuilder b = new StringBuilder(name);
        double mean = h.getMean();
        b.append(" count=").append(h.getTotalCount());
        b.append(" mean=").append(mean);
        b.append(" meanbits=").append(Long.toHexString(Double.doubleToLongBits(mean)));
        b.append(" min=").append(h.getMinValue());
        b.append(" max=").append(h.getMaxValue());
        for (double p : PCTS) {
            b.append(String.format(Locale.ROOT, " p%s=%d", fmt(p), h.getValueAtPercentile(p)));
        }
        System.out.println(b);
    }

    static String fmt(double p) {
        return p == Math.rint(p) ? Long.toString((long) p) : Double.toString(p);
    }
}
