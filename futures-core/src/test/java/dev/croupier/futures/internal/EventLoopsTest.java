package dev.croupier.futures.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Properties;
import org.junit.jupiter.api.Test;

/** Netty's Flight Recorder events are off unless the JVM's properties turn them on. */
class EventLoopsTest {

    @Test
    void nettysFlightRecorderEventsAreOffUnlessAPropertySaysOtherwise() {
        Properties none = new Properties();
        EventLoops.quietFlightRecorder(none);
        assertEquals("false", none.getProperty(EventLoops.NETTY_JFR));

        Properties wanted = new Properties();
        wanted.setProperty(EventLoops.NETTY_JFR, "true");
        EventLoops.quietFlightRecorder(wanted);
        assertEquals("true", wanted.getProperty(EventLoops.NETTY_JFR), "a user's choice stands");
    }
}
