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
 * The few libc calls the JDK does not offer: {@code open}/{@code close}/{@code pread} for a
 * descriptor whose page-cache advice the sampler controls (or an {@code O_DIRECT} one for
 * {@link LinuxAio}), {@code posix_fadvise} to turn off
 * readahead and drop pages from the page cache, {@code mincore} to count them, and
 * {@code mmap}/{@code madvise} for huge-page workspaces.
 *
 * <p>Design note: calls go through FFM downcalls ({@link Linker#nativeLinker()}), which need
 * {@code --enable-native-access} (the build passes it). A separate {@code O_RDONLY} descriptor
 * is opened instead of digging the descriptor out of a {@code FileChannel} reflectively, and
 * buffered reads go through it: {@code POSIX_FADV_DONTNEED} acts on the file's page cache,
 * whichever descriptor names it, but {@code POSIX_FADV_RANDOM} (no readahead) only on the
 * open file description it is given. Without it every buffered read pulls in a readahead
 * window that {@code DONTNEED} on the span read never drops. Linux only; elsewhere {@link #AVAILABLE} is false and callers skip
 * the advice. Thread-safe: the handles are immutable and the calls are reentrant.
 */
final class Libc {

    /** True on Linux, where these calls and constants are valid. */
    static final boolean AVAILABLE =
            System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");

    private static final int O_RDONLY = 0;
    /** Same value on x86-64 and aarch64 Linux. */
    private static final int O_CLOEXEC = 0x80000;
    private static final int POSIX_FADV_RANDOM = 1;
    private static final int POSIX_FADV_DONTNEED = 4;
    private static final int EINTR = 4;
    private static final int SC_PAGESIZE = 30;
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_HUGEPAGE = 14;
    /** Size of a transparent huge page on x86-64 and on aarch64 with 4 KiB pages. */
    static final long HUGE_PAGE = 2L << 20;

    private static final Linker LINKER = Linker.nativeLinker();
    /** Link option that captures {@code errno}; read it back with {@link #errno}. */
    static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final MemoryLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_HANDLE =
            CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final MethodHandle OPEN;
    private static final MethodHandle CLOSE;
    private static final MethodHandle PREAD;
    private static final MethodHandle FADVISE;
    private static final MethodHandle MINCORE;
    private static final MethodHandle SYSCONF;
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final MethodHandle MADVISE;

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
            PREAD = LINKER.downcallHandle(libc.findOrThrow("pread"),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                    ERRNO);
            FADVISE = LINKER.downcallHandle(libc.findOrThrow("posix_fadvise"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            MINCORE = LINKER.downcallHandle(libc.findOrThrow("mincore"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                            ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
                    ERRNO);
            SYSCONF = LINKER.downcallHandle(libc.findOrThrow("sysconf"),
                    FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            MMAP = LINKER.downcallHandle(libc.findOrThrow("mmap"),
                    FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
            MUNMAP = LINKER.downcallHandle(libc.findOrThrow("munmap"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
            MADVISE = LINKER.downcallHandle(libc.findOrThrow("madvise"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_INT));
        } else {
            OPEN = CLOSE = PREAD = FADVISE = MINCORE = SYSCONF = MMAP = MUNMAP = MADVISE = null;
        }
    }

    private Libc() {}

    /** A buffer for the {@code errno} that calls linked with {@link #ERRNO} capture; one per calling thread. */
    static MemorySegment callState(Arena arena) {
        return arena.allocate(CALL_STATE);
    }

    /** The {@code errno} the last call captured into {@code state}. */
    static int errno(MemorySegment state) {
        return (int) ERRNO_HANDLE.get(state, 0L);
    }

    /** Opens {@code file} read-only and returns the descriptor. */
    static int openReadOnly(Path file) throws IOException {
        return open(file, O_RDONLY | O_CLOEXEC);
    }

    /**
     * Opens {@code file} read-only with {@code O_DIRECT} (for native AIO, which needs a raw
     * descriptor) and returns the descriptor.
     *
     * @throws IOException if the file system refuses {@code O_DIRECT} or the architecture's
     *     flag value is not known here (x86-64 and aarch64 are)
     */
    static int openDirect(Path file) throws IOException {
        String arch = System.getProperty("os.arch", "");
        int direct = arch.equals("amd64") || arch.equals("x86_64") ? 0x4000 : arch.equals("aarch64") ? 0x10000 : 0;
        if (direct == 0) {
            throw new IOException("O_DIRECT's value on " + arch + " is not known");
        }
        return open(file, O_RDONLY | O_CLOEXEC | direct);
    }

    private static int open(Path file, int flags) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = callState(arena);
            int fd = (int) OPEN.invokeExact(state, arena.allocateFrom(file.toString()), flags, 0);
            if (fd < 0) {
                throw new IOException("open(" + file + ") failed: errno " + errno(state));
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
     * Reads up to {@code length} bytes at file offset {@code position} into {@code target}
     * starting at {@code offset}; returns the bytes read, 0 at the end of the file. Retries
     * when interrupted by a signal.
     */
    static long pread(int fd, MemorySegment target, long offset, long length, long position) throws IOException {
        MemorySegment into = target.asSlice(offset, length);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = callState(arena);
            while (true) {
                long n = (long) PREAD.invokeExact(state, fd, into, length, position);
                if (n >= 0) {
                    return n;
                }
                int errno = errno(state);
                if (errno != EINTR) {
                    throw new IOException("pread of " + length + " bytes at offset " + position + " failed: errno " + errno);
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("pread(2) downcall failed", t);
        }
    }

    /** Turns off readahead for reads through {@code fd}. Returns 0 or an error number. */
    static int adviseRandom(int fd) {
        try {
            return (int) FADVISE.invokeExact(fd, 0L, 0L, POSIX_FADV_RANDOM);
        } catch (Throwable t) {
            throw new IllegalStateException("posix_fadvise(2) downcall failed", t);
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
            MemorySegment state = callState(arena);
            int rc = (int) MINCORE.invokeExact(state, mapped, mapped.byteSize(), residency);
            if (rc != 0) {
                throw new IOException("mincore failed: errno " + errno(state));
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

    /**
     * Maps {@code size} bytes of zeroed anonymous memory, 2 MiB-aligned and advised as
     * transparent huge pages, owned by {@code arena} (unmapped when it closes). Pages are
     * zeroed by the kernel on first touch, so nothing is written up front. Huge pages matter
     * because readers write rows to scattered slots of a workspace of hundreds of MiB: with
     * 4 KiB pages nearly every row write misses the TLB.
     *
     * <p>To get the alignment it maps 2 MiB more than needed and unmaps the slack on both
     * sides, so the mapping ends at {@code size} rounded up to a base page. Left in place, the
     * tail slack would let the kernel back the last partial 2 MiB region with a whole huge
     * page, up to 2 MiB of resident memory beyond what the sampler counts against its limit.
     */
    static MemorySegment mapAnonymous(long size, Arena arena) {
        long length = SamplerLayout.alignUp(size, pageSize());
        long reserved = length + HUGE_PAGE;
        MemorySegment raw;
        try {
            raw = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, reserved, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS, -1, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("mmap(2) downcall failed", t);
        }
        if (raw.address() == -1L) {
            throw new OutOfMemoryError("mmap of " + reserved + " bytes of anonymous memory failed");
        }
        long start = (raw.address() + HUGE_PAGE - 1) & -HUGE_PAGE;
        long head = start - raw.address();
        long tail = reserved - head - length;
        if (head > 0) {
            unmap(MemorySegment.ofAddress(raw.address()).reinterpret(head));
        }
        if (tail > 0) {
            unmap(MemorySegment.ofAddress(start + length).reinterpret(tail));
        }
        MemorySegment mapping = MemorySegment.ofAddress(start).reinterpret(length, arena, Libc::unmap);
        try {
            int ignored = (int) MADVISE.invokeExact(mapping, length, MADV_HUGEPAGE);
        } catch (Throwable t) {
            throw new IllegalStateException("madvise(2) downcall failed", t);
        }
        return mapping.asSlice(0, size);
    }

    private static void unmap(MemorySegment mapping) {
        try {
            int ignored = (int) MUNMAP.invokeExact(mapping, mapping.byteSize());
        } catch (Throwable t) {
            throw new IllegalStateException("munmap(2) downcall failed", t);
        }
    }
}
