package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** The one size grammar of Croupier's flags ({@link NodeServer#parseSize}). */
class SizeGrammarProperties {

    private static final String[] UNITS = {"", "k", "m", "g", "t"};

    @Property
    void everySpellingOfAUnitIsThatPowerOf1024(@ForAll @LongRange(min = 0, max = 1 << 20) long n,
                                               @ForAll @IntRange(min = 0, max = 4) int unit) {
        long expected = n << (10 * unit);
        String u = UNITS[unit];
        for (String spelling : unit == 0 ? new String[] {"", "b", "B"}
                : new String[] {u, u.toUpperCase(), u + "b", u.toUpperCase() + "B", u + "ib", u.toUpperCase() + "iB"}) {
            assertEquals(expected, NodeServer.parseSize("--store-memory", n + spelling), n + spelling);
            assertEquals(expected, NodeServer.parseSize("--store-memory", " " + n + spelling + " "), "trimmed");
        }
    }

    @Example
    void decimalsScaleBeforeTheyAreCut() {
        assertEquals(3L << 29, NodeServer.parseSize("--store-memory", "1.5g"));
        assertEquals(512, NodeServer.parseSize("--store-memory", "0.5k"));
    }

    @Example
    void aBadSizeIsRefusedNamingTheFlagAndText() {
        for (String bad : new String[] {"", "g", "12q", "1.2.3m", "-5m", "99999999999t"}) {
            CroupierException e = assertThrows(CroupierException.class, () -> NodeServer.parseSize("--store-memory", bad),
                    bad);
            assertEquals(ErrorCode.BAD_INPUT, e.code());
            assertTrue(e.getMessage().contains("--store-memory") && e.getMessage().contains("'" + bad + "'"),
                    e.getMessage());
        }
    }
}
