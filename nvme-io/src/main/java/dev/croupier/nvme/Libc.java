package dev.croupier.nvme;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The few libc calls the JDK does not offer: {@code open}/{@code close} to get a descriptor,
 * {@code posix_fadvise} to drop pages from the page cache, {@code mincore} to count them.
 *
 * <p>Design note: calls go through FFM downcalls ({@link Linker#nativeLinker()}), which need
 * {@code --enable-native-access} (the build passes it). A separate {@code O_RDONLY} descriptor
 * is opened for advice instead of digging the descriptor out of a {@code FileChannel}
 * reflectively: {@code POSIX_FADV_DONTNEED} acts on the file's page cache, whichever
 * descriptor names it. Linux only; elsewhere {@link #AVAILABLE} is false and callers skip
 * the advice. Thread-safe: the handles are immutable and the calls are reentrant.
 */
final class Libc {

    /** True on Linux, where these calls and constants are valid. */
    static final boolean AVAILABLE =
            System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");

    private static final int O_RDONLY = 0;
    /** Same value on x86-64 and aarch64 Linux. */
    private static final int O_CLOEXEC = 0x80000;
    private static final int POSIX_FADV_DONTNEED = 4;
    private static final int SC_PAGESIZE = 30;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_HANDLE =
            CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final MethodHandle OPEN;
    private static final MethodHandle CLOSE;
    private static final MethodHandle FADVISE;
    private static final MethodHandle MINCORE;
    private static final MethodHandle SYSCONF;

    static {
        if (AVAILABLE) {
            SymbolLookup libc = LINKER.defaultLookup();
            // open(2) is variadic; pass the mode as the variadic int so the ABI is honoured.
            OPEN = LINKER.downcallHandle(libc.findOrThrow("open"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
                    ERRNO, Linker.Option.firstVariadicArg(2));
            CLOSE = LINKER.downcallHandle(libc.findOrThrow("close"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            FADVISE = LINKER.downcallHandle(libc.findOrThrow("posix_fadvise"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            MINCORE = LINKER.downcallHandle(libc.findOrThrow("mincore"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
                    ERRNO);
            SYSCONF = LINKER.downcallHandle(libc.findOrThrow("sysconf"),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        } else {
            OPEN = CLOSE = FADVISE = MINCORE = SYSCONF = null;
        }
    }

    private Libc() {}

    /** Opens {@code file} read-only and returns the descriptor. */
    static int openReadOnly(Path file) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            int fd = (int) OPEN.invokeExact(state, arena.allocateFrom(file.toString()),
                    O_RDONLY | O_CLOEXEC, 0);
            if (fd < 0) {
                throw new IOException("open(" + file + ") failed: errno " + (int) ERRNO_HANDLE.get(state, 0L));
            }
            return fd;
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("open(2) downcall failed", t);
        }
    }

    static void close(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw new IllegalStateException("close(2) downcall failed", t);
        }
    }

    /**
     * Asks the kernel to drop the cached pages of {@code [offset, offset + length)};
     * length 0 means to the end of the file. Returns 0 or an error number.
     */
    static int dropFromPageCache(int fd, long offset, long length) {
        try {
            return (int) FADVISE.invokeExact(fd, offset, length, POSIX_FADV_DONTNEED);
        } catch (Throwable t) {
            throw new IllegalStateException("posix_fadvise(2) downcall failed", t);
        }
    }

    /** Fills {@code residency} with one byte per page of {@code mapped}; bit 0 set = cached. */
    static void mincore(MemorySegment mapped, MemorySegment residency) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            int rc = (int) MINCORE.invokeExact(state, mapped, mapped.byteSize(), residency);
            if (rc != 0) {
                throw new IOException("mincore failed: errno " + (int) ERRNO_HANDLE.get(state, 0L));
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("mincore(2) downcall failed", t);
        }
    }

    static long pageSize() {
        try {
            return (long) SYSCONF.invokeExact(SC_PAGESIZE);
        } catch (Throwable t) {
            throw new IllegalStateException("sysconf(3) downcall failed", t);
        }
    }
}
