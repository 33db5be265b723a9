package dev.croupier.nvme;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.Locale;

/**
 * Linux native AIO, the kernel interface fio's {@code libaio} engine uses, called as raw system
 * calls through FFM (glibc has no wrappers, and libaio may not be installed). With a descriptor
 * opened {@code O_DIRECT}, {@code io_submit} queues reads without blocking and
 * {@code io_getevents} reaps their completions, so one thread keeps many reads in flight.
 *
 * <p>The two frames the kernel reads and writes, little-endian on both supported ABIs:
 * <pre>
 *   struct iocb (64 bytes, one per read, filled by {@link #prepareRead})
 *    0               8         12         16     18      20          24
 *   +---------------+---------+----------+------+-------+-----------+
 *   | u64 aio_data  | u32 key | u32 rwfl | u16  | s16   | u32 fd    |
 *   |  (our slot)   |    0    |    0    | op=0 | prio 0|           |
 *   +---------------+---------+----------+------+-------+-----------+
 *   24              32               40                48              56         60        64
 *   +---------------+----------------+-----------------+---------------+----------+---------+
 *   | u64 buf addr  | u64 nbytes     | s64 file offset | u64 reserved  | u32 flags| u32 resfd|
 *   +---------------+----------------+-----------------+---------------+----------+---------+
 *
 *   struct io_event (32 bytes, one per completion, read by {@link #eventData}/{@link #eventResult})
 *    0               8               16                       24               32
 *   +---------------+---------------+------------------------+----------------+
 *   | u64 data      | u64 obj       | s64 res (bytes or -err) | s64 res2       |
 *   +---------------+---------------+------------------------+----------------+
 * </pre>
 *
 * <p>Available on Linux x86-64 and aarch64 (system call numbers differ and are chosen here);
 * elsewhere {@link #AVAILABLE} is false. Thread-safe: the handles are immutable; a context is
 * used by the one thread that owns it.
 */
final class LinuxAio {

    static final int IOCB_BYTES = 64;
    static final int EVENT_BYTES = 32;
    private static final short IOCB_CMD_PREAD = 0;
    private static final int EINTR = 4;

    private static final long SYS_IO_SETUP;
    private static final long SYS_IO_DESTROY;
    private static final long SYS_IO_SUBMIT;
    private static final long SYS_IO_GETEVENTS;
    /** True where the system call numbers are known and {@code syscall(2)} links. */
    static final boolean AVAILABLE;

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED;

    private static final MethodHandle SETUP;
    private static final MethodHandle DESTROY;
    private static final MethodHandle SUBMIT;
    private static final MethodHandle GETEVENTS;

    static {
        String arch = System.getProperty("os.arch", "");
        boolean linux = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");
        if (linux && (arch.equals("amd64") || arch.equals("x86_64"))) {
            SYS_IO_SETUP = 206;
            SYS_IO_DESTROY = 207;
            SYS_IO_GETEVENTS = 208;
            SYS_IO_SUBMIT = 209;
        } else if (linux && arch.equals("aarch64")) {
            SYS_IO_SETUP = 0;
            SYS_IO_DESTROY = 1;
            SYS_IO_SUBMIT = 2;
            SYS_IO_GETEVENTS = 4;
        } else {
            SYS_IO_SETUP = SYS_IO_DESTROY = SYS_IO_SUBMIT = SYS_IO_GETEVENTS = -1;
        }
        MethodHandle setup = null;
        MethodHandle destroy = null;
        MethodHandle submit = null;
        MethodHandle getevents = null;
        if (SYS_IO_SETUP >= 0) {
            Linker linker = Linker.nativeLinker();
            MemorySegment syscall = linker.defaultLookup().find("syscall").orElse(null);
            if (syscall != null) {
                // long syscall(long number, ...): every argument after the number is variadic.
                Linker.Option errno = Libc.ERRNO;
                Linker.Option variadic = Linker.Option.firstVariadicArg(1);
                ValueLayout l = ValueLayout.JAVA_LONG;
                ValueLayout a = ValueLayout.ADDRESS;
                setup = linker.downcallHandle(syscall, FunctionDescriptor.of(l, l, l, a), errno, variadic);
                destroy = linker.downcallHandle(syscall, FunctionDescriptor.of(l, l, l), errno, variadic);
                submit = linker.downcallHandle(syscall, FunctionDescriptor.of(l, l, l, l, a), errno, variadic);
                getevents = linker.downcallHandle(syscall, FunctionDescriptor.of(l, l, l, l, l, a, a), errno, variadic);
            }
        }
        SETUP = setup;
        DESTROY = destroy;
        SUBMIT = submit;
        GETEVENTS = getevents;
        AVAILABLE = SETUP != null;
    }

    private LinuxAio() {}

    /** Creates a context for up to {@code depth} reads in flight. */
    static long setup(int depth) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.callState(arena);
            MemorySegment ctx = arena.allocate(ValueLayout.JAVA_LONG);
            ctx.set(ValueLayout.JAVA_LONG, 0, 0L);
            long rc = (long) SETUP.invokeExact(state, SYS_IO_SETUP, (long) depth, ctx);
            if (rc < 0) {
                throw new IOException("io_setup(" + depth + ") failed: errno " + Libc.errno(state)
                        + " (see /proc/sys/fs/aio-max-nr)");
            }
            return ctx.get(ValueLayout.JAVA_LONG, 0);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("io_setup downcall failed", t);
        }
    }

    /** Destroys a context; the kernel first waits for the reads still in flight. */
    static void destroy(long ctx) {
        try (Arena arena = Arena.ofConfined()) {
            long ignored = (long) DESTROY.invokeExact(Libc.callState(arena), SYS_IO_DESTROY, ctx);
        } catch (Throwable t) {
            throw new IllegalStateException("io_destroy downcall failed", t);
        }
    }

    /** Fills {@code iocb} as a read of {@code length} bytes at {@code position} to {@code address}, tagged {@code data}. */
    static void prepareRead(MemorySegment iocb, long data, int fd, long address, long length, long position) {
        iocb.fill((byte) 0);
        iocb.set(U64, 0, data);
        iocb.set(U16, 16, IOCB_CMD_PREAD);
        iocb.set(U32, 20, fd);
        iocb.set(U64, 24, address);
        iocb.set(U64, 32, length);
        iocb.set(U64, 40, position);
    }

    /**
     * Queues the one read whose iocb address {@code iocbPointer} holds (an array of one, as
     * {@code io_submit} takes); returns 1, or a negative errno when the kernel took nothing.
     * Retries when interrupted by a signal.
     */
    static long submit(long ctx, MemorySegment iocbPointer, MemorySegment state) {
        try {
            while (true) {
                long n = (long) SUBMIT.invokeExact(state, SYS_IO_SUBMIT, ctx, 1L, iocbPointer);
                if (n >= 0) {
                    return n;
                }
                int errno = Libc.errno(state);
                if (errno != EINTR) {
                    return -errno;
                }
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("io_submit downcall failed", t);
        }
    }

    /** Waits for at least one completion and reaps up to {@code max} into {@code events}; returns how many. */
    static int getEvents(long ctx, MemorySegment events, int max, MemorySegment state) throws IOException {
        try {
            while (true) {
                long n = (long) GETEVENTS.invokeExact(state, SYS_IO_GETEVENTS, ctx, 1L, (long) max, events,
                        MemorySegment.NULL);
                if (n >= 0) {
                    return (int) n;
                }
                int errno = Libc.errno(state);
                if (errno != EINTR) {
                    throw new IOException("io_getevents failed: errno " + errno);
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("io_getevents downcall failed", t);
        }
    }

    static long eventData(MemorySegment events, int i) {
        return events.get(U64, (long) i * EVENT_BYTES);
    }

    /** Bytes read, or a negative errno. */
    static long eventResult(MemorySegment events, int i) {
        return events.get(U64, (long) i * EVENT_BYTES + 16);
    }
}
