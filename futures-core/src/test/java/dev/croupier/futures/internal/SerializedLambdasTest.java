package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.croupier.futures.Fn0;
import dev.croupier.futures.Fn1;
import java.lang.invoke.SerializedLambda;
import org.junit.jupiter.api.Test;

/** Task names and code fingerprints read a lambda's serialized form without reflection. */
class SerializedLambdasTest {

    static long twice(long x) {
        return 2 * x;
    }

    /** Not serializable: the form must be taken before any captured value is written. */
    static final class Unwritable {
        final byte[] bytes = new byte[1 << 20];
    }

    @Test
    void aMethodReferenceNamesItsTarget() {
        Fn1<Long, Long> fn = SerializedLambdasTest::twice;
        SerializedLambda form = SerializedLambdas.of(fn);
        assertNotNull(form);
        assertEquals("twice", form.getImplMethodName());
        assertEquals("dev/croupier/futures/internal/SerializedLambdasTest", form.getCapturingClass());
        assertEquals("SerializedLambdasTest::twice", TaskNames.of(fn));
    }

    @Test
    void aLambdaCapturingWhatCannotBeWrittenStillHasAForm() {
        Unwritable captured = new Unwritable();
        Fn0<Integer> fn = () -> captured.bytes.length;
        SerializedLambda form = SerializedLambdas.of(fn);
        assertNotNull(form);
        assertEquals(1, form.getCapturedArgCount());
        assertEquals(SerializedLambdasTest.class, CodeFingerprint.of(fn).holder());
    }

    @Test
    void aClassThatIsNoLambdaHasNone() {
        assertNull(SerializedLambdas.of(new java.util.ArrayList<String>()));
        assertEquals("ArrayList", TaskNames.of(new java.util.ArrayList<String>()));
    }
}
