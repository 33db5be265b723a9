package dev.croupier.futures.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** The release of this build, from a resource the build writes; drivers and nodes compare it. */
final class CroupierVersion {

    private static final String VERSION = load();

    private CroupierVersion() {}

    static String get() {
        return VERSION;
    }

    private static String load() {
        try (InputStream in = CroupierVersion.class.getResourceAsStream("croupier-version.properties")) {
            if (in == null) {
                throw new IllegalStateException("croupier-version.properties is missing from the futures-core jar");
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
