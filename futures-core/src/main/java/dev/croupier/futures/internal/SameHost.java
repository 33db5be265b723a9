package dev.croupier.futures.internal;

import dev.croupier.futures.wire.DataGrpc;
import dev.croupier.futures.wire.Lent;
import dev.croupier.futures.wire.PullRequest;
import dev.croupier.objectstore.ObjectDirectory;
import dev.croupier.objectstore.ObjectId;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The same-host path of a pull: when the holder runs on this host, its store's files are this
 * host's files, so the object is copied straight out of the holder's shared-memory file (one
 * memory copy) instead of streamed over TCP. Ray has no such path between its nodes.
 *
 * <p>Design: the first pull from a holder is a {@code Data.Lend} call: the holder pins the
 * object for the call and answers with its host id, where the bytes lie, and the file of its
 * store's {@link ObjectDirectory}; a caller with the same host id copies out of a read-only
 * mapping of the file and ends the call, which unpins. Later pulls from that holder make no call
 * at all: the caller finds the object in the holder's directory, copies it out of the region,
 * and keeps the copy only if the object's slot did not change meanwhile (the holder unlists an
 * object before its bytes are freed or moved); otherwise, or when the object is not listed
 * (spilled, say), it calls {@code Lend}. On this 2-vCPU guest a {@code Lend} round trip costs
 * milliseconds of threads waking, as long as copying tens of MiB. A holder's region and
 * directory are kept mapped while copies use them and for {@link #IDLE_MILLIS} after; a spill
 * or fallback file is mapped for one copy. A caller on another host, or one whose copy fails,
 * says so by returning -1 (and remembers an address on another host), and the pull falls back
 * to the stream. The diagnostic system property {@value #PROPERTY}{@code =false} turns the path
 * off, to measure the stream alone.
 *
 * <p>A task's argument need not be copied at all: {@link #borrow} keeps a {@code Lend} call
 * open for as long as the task reads the object in place, in the holder's region, and ends it
 * (which unpins) when the task is done. The copy costs the reader fresh store memory, zeroed
 * by the kernel page by page, as well as the copy; the loan costs one round trip. A holder
 * that dies under a loan leaves its region's pages mapped here, unchanged, until the loan
 * ends. The diagnostic property {@value #LEND_PROPERTY}{@code =false} copies instead, to measure
 * copies. Thread-safe.
 */
final class SameHost {

    /** System property: {@code false} sends every pull over the stream. */
    static final String PROPERTY = "croupier.pull.sameHost";
    /** System property: {@code false} copies every argument instead of borrowing it, to measure copies. */
    static final String LEND_PROPERTY = "croupier.pull.lend";
    /**
     * The smallest object borrowed rather than copied. A loan costs a call (about 65-125 µs
     * here, most of it on the two nodes' CPUs) whatever the size; a copy out of the holder's
     * directory costs no call and about 25 µs plus 90 µs per MiB. Between two node processes
     * (docs/benchmarks.md, "Loans for large objects only"), copies moved 128 KiB objects 3.5
     * times faster than loans and 512 KiB ones faster too; at 1 MiB the two were level, and a
     * reader of every byte pays a loan's page faults besides: so loans from 1 MiB up.
     */
    static final long LEND_MIN_BYTES = 1 << 20;
    /** This host: its boot id and name; a random id where there is no boot id, so it matches nothing. */
    static final String ID = hostId();

    private final boolean enabled = !"false".equals(System.getProperty(PROPERTY));
    private final boolean lending = enabled && !"false".equals(System.getProperty(LEND_PROPERTY));
    private final Map<String, Boolean> otherHost = new ConcurrentHashMap<>();
    /** Holders on this host by address, as their last {@code Lend} described them. */
    private final Map<String, Holder> holders = new ConcurrentHashMap<>();
    /** Holders' memory regions, mapped whole; see {@link Region}. */
    private final Map<Path, Region> regions = new ConcurrentHashMap<>();
    private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(
            r -> Thread.ofPlatform().daemon().name("croupier-region-sweeper").unstarted(r));

    SameHost() {
        sweeper.scheduleWithFixedDelay(this::unmapIdle, IDLE_MILLIS, IDLE_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * How long a holder's region stays mapped after its last copy. Mapping it anew for every
     * copy costs a page fault per page (most of a 64 MiB copy's time); keeping it mapped
     * keeps a dead holder's shared memory alive, so only this long.
     */
    static final long IDLE_MILLIS = 2_000;

    /** A holder on this host: its store's memory region and the directory of the objects in it. */
    record Holder(Path region, Path directory) { }

    /** One holder's region (or directory) file mapped read-only, with the copies using it; guarded by itself. */
    private static final class Region {
        final Arena arena = Arena.ofShared();
        final MemorySegment mapped;
        private int users;
        private long lastUse = System.nanoTime();
        private boolean unmapped;

        Region(Path file) throws IOException {
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
                mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
            } catch (IOException | RuntimeException e) {
                arena.close();
                throw e;
            }
        }

        synchronized boolean acquire() {
            if (unmapped) {
                return false;
            }
            users++;
            return true;
        }

        synchronized void release() {
            users--;
            lastUse = System.nanoTime();
        }

        /** Unmaps the region if no copy uses it and (unless {@code now} is null) it has been idle. */
        synchronized boolean unmapIfIdle(Long now) {
            if (users == 0 && !unmapped
                    && (now == null || now - lastUse >= TimeUnit.MILLISECONDS.toNanos(IDLE_MILLIS))) {
                unmapped = true;
                arena.close();
                return true;
            }
            return false;
        }
    }

    private Region region(Path file) throws IOException {
        while (true) {
            Region r = regions.get(file);
            if (r == null) {
                Region fresh = new Region(file);
                r = regions.putIfAbsent(file, fresh);
                if (r == null) {
                    r = fresh;
                } else {
                    fresh.arena.close();
                }
            }
            if (r.acquire()) {
                return r;
            }
            regions.remove(file, r); // unmapped meanwhile: map again
        }
    }

    private void unmapIdle() {
        long now = System.nanoTime();
        regions.entrySet().removeIf(e -> e.getValue().unmapIfIdle(now));
    }

    /** Unmaps every region. */
    void close() {
        sweeper.shutdownNow();
        holders.clear();
        regions.values().forEach(r -> r.unmapIfIdle(null));
        regions.clear();
    }

    private static String hostId() {
        try {
            String boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
            return boot + "/" + InetAddress.getLocalHost().getHostName();
        } catch (IOException | RuntimeException e) {
            return "unknown-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        }
    }

    /**
     * Copies the object through the holder's file into what {@code sink} gives: as the holder's
     * directory lists it when an earlier {@code Lend} named the directory, else as a
     * {@code Lend} call says (a loan ended once the copy is made). Returns its size, or -1 where
     * the stream must be used: another host, no such file, a failed copy. Throws
     * {@link StatusRuntimeException} NOT_FOUND when the holder has no such object.
     */
    long copy(Channel channel, String address, PullRequest request, PeerChannels.Sink sink)
            throws InterruptedException {
        if (!enabled || otherHost.containsKey(address)) {
            return -1;
        }
        Holder holder = holders.get(address);
        if (holder != null) {
            long copied = copyListed(address, holder, WireCodec.id(request.getId()), sink);
            if (copied >= 0) {
                return copied;
            }
        }
        List<Loan> loans = lend(channel, address, request);
        if (loans == null) {
            return -1;
        }
        Loan loan = loans.getFirst();
        try {
            Lent lent = loan.answer();
            if (lent == null) {
                return -1;
            }
            if (lent.getMemoryRegion()) {
                MemorySegment frame = loan.map(lent);
                if (frame == null) {
                    return -1;
                }
                copyOut(frame, 0, lent.getLength(), sink);
            } else {
                // A spill or fallback file: mapped for this copy only.
                try (Arena mapping = Arena.ofConfined();
                     FileChannel file = FileChannel.open(Path.of(lent.getFile()), StandardOpenOption.READ)) {
                    copyOut(file.map(FileChannel.MapMode.READ_ONLY, lent.getOffset(), lent.getLength(), mapping),
                            0, lent.getLength(), sink);
                }
            }
            return lent.getLength();
        } catch (IOException | RuntimeException e) {
            if (e instanceof StatusRuntimeException notFound) {
                throw notFound;
            }
            return -1;
        } finally {
            loan.close(); // the holder unpins
        }
    }

    /** Whether an object of the holder at {@code address} may be borrowed: it is not known to run on another host. */
    boolean mayLend(String address) {
        return lending && !otherHost.containsKey(address);
    }

    /**
     * Starts borrowing the objects {@code request} names (its id, then its more) from the
     * holder at {@code address}, on one call: asks it to pin them and say where they lie. A
     * loan per object, in order; each one's {@link Loan#await} gives its reading, or null where
     * the object must be copied. Null at once where the holder is known to run on another host.
     */
    List<Loan> borrow(Channel channel, String address, PullRequest request) {
        return mayLend(address) ? lend(channel, address, request) : null;
    }

    /** Starts a {@code Lend} call; null if this node's channel cannot start one (it is stopping). */
    private List<Loan> lend(Channel channel, String address, PullRequest request) {
        LendCall call = new LendCall(address, 1 + request.getMoreCount());
        try {
            call.context.run(() -> ClientCalls.asyncServerStreamingCall(channel.newCall(DataGrpc.getLendMethod(),
                    CallOptions.DEFAULT), request, call));
        } catch (RuntimeException channelClosed) {
            call.context.cancel(null);
            return null; // the pull that follows says so
        }
        return call.loans;
    }

    /**
     * One {@code Lend} call and the holder's answers to it, one per object asked for: it stays
     * open, with no deadline, until each of its loans is closed, which unpins them all at the
     * holder. A task borrows everything it reads from one holder on one call, since on this
     * 2-vCPU guest a call costs a node process milliseconds of its event loop's time.
     */
    private final class LendCall implements StreamObserver<Lent> {
        private final String address;
        private final Context.CancellableContext context = Context.current().withCancellation();
        /** One per object asked for, in the order the holder answers. */
        private final List<Loan> loans;
        /** Answers received; guarded by this. */
        private int answered;
        /** Loans not yet closed; guarded by this. */
        private int open;

        LendCall(String address, int objects) {
            this.address = address;
            List<Loan> loans = new ArrayList<>(objects);
            for (int i = 0; i < objects; i++) {
                loans.add(new Loan(this));
            }
            this.loans = List.copyOf(loans);
            this.open = objects;
        }

        @Override
        public void onNext(Lent lent) {
            Loan next;
            synchronized (this) {
                next = answered < loans.size() ? loans.get(answered++) : null;
            }
            if (next != null) {
                next.answer.complete(lent);
            }
        }

        @Override
        public void onError(Throwable t) {
            // after the answers: the holder is gone; its pages stay mapped here
            loans.forEach(l -> l.answer.completeExceptionally(t));
        }

        @Override
        public void onCompleted() {
            loans.forEach(l -> l.answer.completeExceptionally(new IllegalStateException("node " + address + " lent nothing")));
        }

        /** One of its loans has ended: the last one ends the call, which unpins them all. */
        void closed() {
            boolean last;
            synchronized (this) {
                last = --open == 0;
            }
            if (last) {
                context.cancel(null);
            }
        }
    }

    /**
     * An object of a holder on this host, pinned while the {@code Lend} call that asked for it
     * stays open: until {@link #close}, with its call's other loans, for one copy or, read in
     * place, for a task. A reader process that dies ends the call with its connection.
     */
    final class Loan implements NodeStore.Reading {
        private final LendCall call;
        private final CompletableFuture<Lent> answer = new CompletableFuture<>();
        private Region region;
        private MemorySegment frame;
        private boolean closed;

        private Loan(LendCall call) {
            this.call = call;
        }

        /**
         * Waits for the holder's answer, within a pull's least deadline. Null where the object
         * is not lent here: the holder is on another host (remembered), or failed, or did not
         * answer. The holder's directory, if it names one, is remembered for later copies.
         *
         * @throws StatusRuntimeException NOT_FOUND if the holder has no such object
         */
        Lent answer() throws InterruptedException {
            Lent lent;
            try {
                lent = answer.get(PeerChannels.deadlineMillis(0), TimeUnit.MILLISECONDS);
            } catch (TimeoutException silent) {
                return null;
            } catch (ExecutionException failed) {
                if (failed.getCause() instanceof StatusRuntimeException e && e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                    throw e;
                }
                return null; // not lendable (a heap value, a compressed spill), or the holder is gone
            }
            if (!lent.getHost().equals(ID)) {
                otherHost.put(call.address, Boolean.TRUE);
                return null;
            }
            if (lent.getMemoryRegion() && !lent.getDirectory().isEmpty()) {
                holders.put(call.address, new Holder(Path.of(lent.getFile()), Path.of(lent.getDirectory())));
            }
            return lent;
        }

        /** Maps the holder's region here and returns the object's bytes in it; null if it cannot. */
        synchronized MemorySegment map(Lent lent) {
            try {
                Region mapped = region(Path.of(lent.getFile()));
                if (lent.getOffset() < 0 || lent.getOffset() + lent.getLength() > mapped.mapped.byteSize()) {
                    mapped.release();
                    return null; // not this region's object
                }
                region = mapped;
                frame = mapped.mapped.asSlice(lent.getOffset(), lent.getLength());
                return frame;
            } catch (IOException | RuntimeException unmappable) {
                return null;
            }
        }

        /**
         * Waits for the holder's answer: this loan as a reading of the object where it lies in
         * the holder's memory region, or null (the loan then ended) where it must be copied: the
         * holder is on another host, has the object spilled or on its heap, or does not answer.
         */
        synchronized NodeStore.Reading await() throws InterruptedException {
            if (frame != null) {
                return this; // the argument appears twice
            }
            Lent lent;
            try {
                lent = answer();
            } catch (StatusRuntimeException notFound) {
                lent = null; // the pull that follows says so
            } catch (InterruptedException e) {
                close();
                throw e;
            }
            if (lent == null || !lent.getMemoryRegion() || map(lent) == null) {
                close();
                return null;
            }
            return this;
        }

        @Override
        public MemorySegment frame() {
            return frame;
        }

        /**
         * Ends the loan: unmaps its region here if no other copy or loan uses it; the last loan
         * of its call to end ends the call, which unpins. Closing again does nothing.
         */
        @Override
        public synchronized void close() {
            if (region != null) {
                region.release();
                region = null;
            }
            if (!closed) {
                closed = true;
                call.closed();
            }
        }
    }

    /**
     * Copies object {@code id} as its holder's directory lists it, with no call to the holder.
     * Returns its size, or -1 when it is not listed or its slot changed during the copy (the
     * copy is then worthless, and the caller asks the holder); a holder whose files are gone is
     * forgotten.
     */
    long copyListed(String address, Holder holder, ObjectId id, PeerChannels.Sink sink)
            throws InterruptedException {
        Region directory = holderFile(address, holder, holder.directory());
        if (directory == null) {
            return -1;
        }
        try {
            ObjectDirectory.Listing listing = ObjectDirectory.find(directory.mapped, id);
            Region memory = listing == null ? null : holderFile(address, holder, holder.region());
            if (memory == null) {
                return -1;
            }
            try {
                if (listing.offset() < 0 || listing.offset() + listing.length() > memory.mapped.byteSize()) {
                    return -1; // not this region's directory
                }
                copyOut(memory.mapped, listing.offset(), listing.length(), sink);
                return ObjectDirectory.unchanged(directory.mapped, listing) ? listing.length() : -1;
            } finally {
                memory.release();
            }
        } finally {
            directory.release();
        }
    }

    /** One of a holder's files mapped for a copy, or null (and the holder forgotten) if it is gone. */
    private Region holderFile(String address, Holder holder, Path file) {
        try {
            return region(file);
        } catch (IOException | RuntimeException gone) {
            holders.remove(address, holder);
            return null;
        }
    }

    /** Copies {@code length} bytes of {@code source} from {@code offset} into what {@code sink} gives, if it wants them. */
    private static void copyOut(MemorySegment source, long offset, long length, PeerChannels.Sink sink)
            throws InterruptedException {
        MemorySegment target = sink.open(length);
        if (target != null) {
            MemorySegment.copy(source, offset, target, 0, length);
        }
    }
}
