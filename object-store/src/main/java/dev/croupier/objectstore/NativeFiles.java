package dev.croupier.objectstore;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;

/**
 * Reserves disk (or tmpfs) blocks for a file before it is memory-mapped, and maps memory: files
 * shared with other processes, or a process's own anonymous memory.
 *
 * <p>Design note: writing through a mapping of a sparse file faults (SIGBUS) when the file
 * system is full, which the JVM cannot turn into a clean error. So every file the store maps
 * writable is first given real blocks with {@code posix_fallocate(3)}, called through the FFM
 * linker; a full disk then shows up here as an {@link IOException} the store can report. Where
 * the C library is not reachable the file is filled with zeros by large writes instead, which
 * reserves the same blocks more slowly.
 *
 * <p>Thread-safety: stateless; safe from any thread.
 */
final class NativeFiles {

    private static final int O_RDWR = 2;
    private static final int O_CREAT = 0100;
    private static final int MODE_0600 = 0600;
    private static final int ENOSPC = 28;
    private static final int ZERO_CHUNK = 1 << 20;
    /** madvise(2) advice (Linux 5.14+): fault in a range's pages writable, in one call. */
    private static final int MADV_POPULATE_WRITE = 23;
    /** madvise(2) advice: the range is read in no particular order. */
    private static final int MADV_RANDOM = 1;
    /** mmap(2) on Linux: PROT_READ | PROT_WRITE, and MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE. */
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS_NORESERVE = 0x02 | 0x20 | 0x4000;

    private static final MethodHandle OPEN;
    private static final MethodHandle FALLOCATE;
    private static final MethodHandle CLOSE;
    private static final MethodHandle MADVISE;
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;

    static {
        MethodHandle[] handles = linkLibc();
        OPEN = handles[0];
        FALLOCATE = handles[1];
        CLOSE = handles[2];
        MADVISE = handles[3];
        MMAP = handles[4];
        MUNMAP = handles[5];
    }

    /**
     * Links open, posix_fallocate, close, madvise, and on Linux mmap and munmap, or returns nulls
     * if the C library or native access is not available. Restricted methods are the point here:
     * the JVM runs with {@code --enable-native-access=ALL-UNNAMED} (see the parent pom's
     * croupier.jvm.flags).
     */
    @SuppressWarnings("restricted")
    private static MethodHandle[] linkLibc() {
        MethodHandle[] handles = new MethodHandle[6];
        try {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            Optional<MemorySegment> openSym = libc.find("open");
            Optional<MemorySegment> fallocateSym = libc.find("posix_fallocate");
            Optional<MemorySegment> closeSym = libc.find("close");
            if (openSym.isPresent() && fallocateSym.isPresent() && closeSym.isPresent()) {
                handles[0] = linker.downcallHandle(openSym.get(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
                                ValueLayout.JAVA_INT),
                        Linker.Option.firstVariadicArg(2));
                handles[1] = linker.downcallHandle(fallocateSym.get(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                                ValueLayout.JAVA_LONG));
                handles[2] = linker.downcallHandle(closeSym.get(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            }
            // independent of the three above: without it pages fault in as they are written
            handles[3] = libc.find("madvise").map(m -> linker.downcallHandle(m,
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                            ValueLayout.JAVA_INT))).orElse(null);
            Optional<MemorySegment> mmapSym = libc.find("mmap");
            Optional<MemorySegment> munmapSym = libc.find("munmap");
            // the flags' values above are Linux's; elsewhere the region stays a file
            if (System.getProperty("os.name", "").startsWith("Linux") && mmapSym.isPresent() && munmapSym.isPresent()) {
                handles[4] = linker.downcallHandle(mmapSym.get(), FunctionDescriptor.of(ValueLayout.ADDRESS,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
                handles[5] = linker.downcallHandle(munmapSym.get(),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
            }
        } catch (RuntimeException | LinkageError e) {
            // no usable C library (or native access denied): reserve() writes zeros instead
            return new MethodHandle[6];
        }
        return handles;
    }

    private NativeFiles() {
    }

    /**
     * Creates {@code file} (or reuses it) with {@code bytes} bytes of real, allocated blocks.
     *
     * @param file the file to create
     * @param bytes its size
     * @throws IOException if the blocks cannot be reserved, for example on a full disk
     */
    static void reserve(Path file, long bytes) throws IOException {
        reserve(file, 0, bytes);
    }

    /**
     * Gives {@code [offset, offset + bytes)} of {@code file} real, allocated blocks (creating the
     * file if needed); the bytes there must hold nothing yet, since without the C library they
     * are written with zeros.
     *
     * @throws IOException if the blocks cannot be reserved, for example on a full disk
     */
    static void reserve(Path file, long offset, long bytes) throws IOException {
        if (OPEN != null) {
            int fd;
            int rc;
            try (Arena arena = Arena.ofConfined()) {
                fd = (int) OPEN.invokeExact(arena.allocateFrom(file.toString()), O_RDWR | O_CREAT, MODE_0600);
                if (fd < 0) {
                    throw new IOException("cannot create " + file);
                }
                rc = (int) FALLOCATE.invokeExact(fd, offset, bytes);
                int closed = (int) CLOSE.invokeExact(fd);
                if (closed != 0 && rc == 0) {
                    throw new IOException("cannot close " + file + " after reserving its blocks");
                }
            } catch (IOException e) {
                throw e;
            } catch (Throwable t) {
                throw new IOException("posix_fallocate of " + file + " failed", t);
            }
            if (rc == ENOSPC) {
                throw new IOException("No space left on device: cannot reserve " + bytes + " bytes for " + file);
            }
            if (rc == 0) {
                return;
            }
            // any other error (for example a file system without fallocate): reserve by writing
        }
        writeZeros(file, offset, bytes);
    }

    /** Memory mapped read-write, with the arena that owns the mapping; close it to unmap. */
    record Mapping(Arena arena, MemorySegment segment) implements AutoCloseable {
        @Override
        public void close() {
            arena.close();
        }
    }

    /**
     * Maps the first {@code bytes} of {@code file} read-write and shared, in an arena of its own
     * (closed again if the mapping fails): the store's region, its directory and fallback files.
     */
    static Mapping mapShared(Path file, long bytes) throws IOException {
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return new Mapping(arena, channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena));
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Maps {@code bytes} of this process's own anonymous memory, read-write, in an arena of its
     * own; null where it cannot (not Linux, no native access, or {@code mmap} refused), and the
     * caller maps a file instead.
     *
     * <p>Design note: the mapping is private and {@code MAP_NORESERVE}, so like a sparse file it
     * costs nothing until its pages are touched, and it is not counted against the machine's
     * commit limit in full at once. A fresh page of it costs less to fault in than a page of a
     * tmpfs file: on the 2-vCPU VM of docs/benchmarks.md, 4 GiB of puts into a fresh store took
     * 1.62-1.67 s against 2.02-3.39 s, and its close half the time ("Embedded stores in their
     * process's own memory").
     */
    @SuppressWarnings("restricted")
    static Mapping mapPrivate(long bytes) {
        if (MMAP == null || MUNMAP == null) {
            return null;
        }
        MemorySegment at;
        try {
            at = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, bytes, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS_NORESERVE, -1, 0L);
        } catch (Throwable t) {
            return null;
        }
        if (at.address() == -1L) { // MAP_FAILED
            return null;
        }
        Arena arena = Arena.ofShared();
        return new Mapping(arena, at.reinterpret(bytes, arena, NativeFiles::unmap));
    }

    private static void unmap(MemorySegment mapped) {
        try {
            int ignored = (int) MUNMAP.invokeExact(mapped, mapped.byteSize());
        } catch (Throwable t) {
            // munmap fails only for a bad range, which this one is not; the process keeps it otherwise
        }
    }

    /**
     * Maps every page of {@code range} (page-aligned, in a writable mapping) into this
     * process's page tables, in one {@code madvise(MADV_POPULATE_WRITE)} call.
     *
     * <p>Design note: a page of fresh store memory otherwise costs one page fault at its first
     * write. On virtual machines a fault can cost 10 µs or more, far above the copy it precedes: on
     * a 2-vCPU VM a first copy into fresh memory ran at 0.32 GB/s faulting page by page, and at
     * about 1 GB/s into a store that populates (docs/benchmarks.md, {@code FirstTouchCopy}). The
     * call is only an optimization: where the kernel
     * (before 5.14) or the C library lacks it, the pages fault in as they are written.
     *
     * @return whether the range was populated
     */
    static boolean populate(MemorySegment range) {
        return madvise(range, MADV_POPULATE_WRITE);
    }

    /**
     * Advises {@code range} (page-aligned, mapped) as read in no particular order
     * ({@code madvise(MADV_RANDOM)}), for the store's region, whose pages are written and read
     * wherever objects lie.
     *
     * <p>Design note: the advice is given for what Linux does with it at the end: a mapping so
     * advised has no page-use history ({@code vma_has_recency}), so tearing it down does not mark
     * each of its pages accessed on the page lists first. That marking was a fifth of a store's
     * close (docs/benchmarks.md, "A store's close"); tmpfs has no read-ahead for the advice to
     * turn off. Only an optimization: where it is refused, the close takes longer.
     *
     * @return whether the advice was taken
     */
    static boolean adviseRandom(MemorySegment range) {
        return madvise(range, MADV_RANDOM);
    }

    private static boolean madvise(MemorySegment range, int advice) {
        if (MADVISE == null || range.byteSize() == 0) {
            return false;
        }
        try {
            return (int) MADVISE.invokeExact(range, range.byteSize(), advice) == 0;
        } catch (Throwable t) {
            return false;
        }
    }

    private static void writeZeros(Path file, long offset, long bytes) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(ZERO_CHUNK, Math.max(1, bytes)));
            long position = offset;
            while (position < offset + bytes) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), offset + bytes - position));
                position += channel.write(zeros, position);
            }
        }
    }
}
