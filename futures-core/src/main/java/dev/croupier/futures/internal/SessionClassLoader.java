package dev.croupier.futures.internal;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.ConcurrentHashMap;
import java.util.jar.JarEntry;
import java.util.jar.JarInputStream;

/**
 * The classes a driver shipped to a node for its session ({@code Control.ShipCode}): user code
 * that is not on the node's class path. Each session has a loader of its own, so two drivers
 * may ship different builds of one class to the same node; the loader and its classes go with
 * the session.
 *
 * <p>Design: parent-first, like the JDK's loaders. A class on the node's class path (Croupier,
 * the JDK, libraries started with the node) wins; if the driver's bytes for it differ,
 * {@link CodeFingerprint} refuses the attempt rather than run other code than the driver's. Only
 * class files are kept: a jar's other resources stay with the driver. The jar arrives from an
 * authenticated session (the token guards every call); its size and the bytes it inflates to
 * are bounded, so a hostile jar cannot exhaust the node's heap.
 *
 * <p>Thread-safety: thread-safe (parallel capable).
 */
final class SessionClassLoader extends ClassLoader {

    static {
        registerAsParallelCapable();
    }

    /** Largest jar a session may ship at once. */
    static final int MAX_JAR_BYTES = 256 << 20;
    /** Largest total of class files a session may hold. */
    static final long MAX_CLASS_BYTES = 512L << 20;

    private final ConcurrentHashMap<String, byte[]> classes = new ConcurrentHashMap<>();
    private long held;

    SessionClassLoader(long session, ClassLoader parent) {
        super("croupier-session-" + Long.toHexString(session), parent);
    }

    /**
     * Adds the class files of {@code jar}; a class already held keeps its first bytes.
     *
     * @return the number of classes held after
     * @throws IOException if the jar cannot be read or holds more than the bounds allow
     */
    synchronized int add(byte[] jar) throws IOException {
        try (JarInputStream in = new JarInputStream(new ByteArrayInputStream(jar))) {
            for (JarEntry e = in.getNextJarEntry(); e != null; e = in.getNextJarEntry()) {
                String entry = e.getName();
                if (e.isDirectory() || !entry.endsWith(".class") || entry.endsWith("module-info.class")) {
                    continue;
                }
                long room = MAX_CLASS_BYTES - held;
                byte[] bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, room + 1));
                if (bytes.length > room) {
                    throw new IOException("shipped code holds more than " + (MAX_CLASS_BYTES >> 20)
                            + " MiB of class files (at entry " + entry + ")");
                }
                String name = entry.substring(0, entry.length() - ".class".length()).replace('/', '.');
                if (classes.putIfAbsent(name, bytes) == null) {
                    held += bytes.length;
                }
            }
        }
        return classes.size();
    }

    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
        byte[] bytes = classes.get(name);
        if (bytes == null) {
            throw new ClassNotFoundException(name + " is neither on the node's class path nor in the code the driver shipped");
        }
        return defineClass(name, bytes, 0, bytes.length);
    }

    /** Class files of shipped classes too, so {@link CodeFingerprint} can digest them. */
    @Override
    public InputStream getResourceAsStream(String name) {
        InputStream parents = super.getResourceAsStream(name);
        if (parents != null || !name.endsWith(".class")) {
            return parents;
        }
        byte[] bytes = classes.get(name.substring(0, name.length() - ".class".length()).replace('/', '.'));
        return bytes == null ? null : new ByteArrayInputStream(bytes);
    }
}
