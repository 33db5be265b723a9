package dev.croupier.futures;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Hosts of a test's own network: one bridge in this namespace (the driver's side) and, per host,
 * a network namespace joined to the bridge by a veth pair, with its own 10.x address. Names are
 * unique per instance ({@code crp<id>...}); {@link #close()} deletes everything made, in reverse
 * order, even after a failure half-way. Needs root and iproute2's {@code ip}.
 */
final class NetworkNamespaces implements AutoCloseable {

    private final String id = Integer.toString(ThreadLocalRandom.current().nextInt(36 * 36 * 36, 36 * 36 * 36 * 36), 36);
    private final String subnet = "10." + (100 + ThreadLocalRandom.current().nextInt(100)) + "."
            + ThreadLocalRandom.current().nextInt(250);
    private final String bridge = "crp" + id + "b";
    private final Deque<List<String>> undo = new ArrayDeque<>();
    private int hosts;

    /**
     * Why namespaces cannot be made here (not root, no {@code ip}, no permission), or null if
     * they can: tries to make one and delete it.
     */
    static String unavailable() {
        String probe = "crp-probe-" + ProcessHandle.current().pid();
        try {
            String made = run(List.of("ip", "netns", "add", probe));
            if (made != null) {
                return "cannot make a network namespace (ip netns add): " + made;
            }
            run(List.of("ip", "netns", "del", probe));
            return null;
        } catch (IOException e) {
            return "no iproute2 'ip' command: " + e.getMessage();
        }
    }

    NetworkNamespaces() throws IOException {
        must("ip", "link", "add", bridge, "type", "bridge");
        undo.push(List.of("ip", "link", "del", bridge));
        must("ip", "addr", "add", subnet + ".1/24", "dev", bridge);
        must("ip", "link", "set", bridge, "up");
    }

    /** Makes the next host and returns its address; its namespace is {@link #namespace(int)}. */
    String addHost() throws IOException {
        int k = hosts++;
        String ns = namespace(k);
        String outer = hostLink(k);
        String inner = "crp" + id + "p" + k;
        String address = subnet + "." + (10 + k);
        must("ip", "netns", "add", ns);
        undo.push(List.of("ip", "netns", "del", ns));
        must("ip", "link", "add", outer, "type", "veth", "peer", "name", inner);
        undo.push(List.of("ip", "link", "del", outer)); // deleting one end deletes the pair
        must("ip", "link", "set", inner, "netns", ns);
        must("ip", "link", "set", outer, "master", bridge);
        must("ip", "link", "set", outer, "up");
        must("ip", "netns", "exec", ns, "ip", "addr", "add", address + "/24", "dev", inner);
        must("ip", "netns", "exec", ns, "ip", "link", "set", inner, "up");
        must("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
        return address;
    }

    String namespace(int host) {
        return "crp-" + id + "-" + host;
    }

    /** The bridge side of host {@code host}'s link: down, the host is cut off from every other. */
    String hostLink(int host) {
        return "crp" + id + "h" + host;
    }

    void setLink(int host, boolean up) throws IOException {
        must("ip", "link", "set", hostLink(host), up ? "up" : "down");
    }

    /** {@code command} run inside host {@code host}'s namespace. */
    List<String> inside(int host, List<String> command) {
        List<String> out = new ArrayList<>(List.of("ip", "netns", "exec", namespace(host)));
        out.addAll(command);
        return out;
    }

    @Override
    public void close() {
        while (!undo.isEmpty()) {
            try {
                run(undo.pop());
            } catch (IOException ignored) {
                // keep deleting the rest
            }
        }
    }

    private static void must(String... command) throws IOException {
        String failed = run(List.of(command));
        if (failed != null) {
            throw new IOException(String.join(" ", command) + ": " + failed);
        }
    }

    /** Runs {@code command}; null if it succeeded, else its error output. */
    private static String run(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        try {
            return p.waitFor() == 0 ? null : "exit " + p.exitValue() + ": " + out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
