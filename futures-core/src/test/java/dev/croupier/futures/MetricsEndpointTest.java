package dev.croupier.futures;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's /metrics: every family there, named croupier_..., counters ending in _total, each
 * series labelled with the node; the task counters move with a job and the fetched bytes with a
 * pull.
 */
@Timeout(120)
class MetricsEndpointTest {

    @TempDir
    Path dir;

    private static String scrape(NodeServer node) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + node.metricsPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        return r.body();
    }

    private static double value(String text, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
        return m.find() ? Double.parseDouble(m.group(1)) : -1;
    }

    @Test
    void aDriverServesTasksByNodeAndWhatOnlyTheOwnerKnows() throws Exception {
        try (Cluster c = TestClusters.small(2, dir).metricsPort(0).start()) {
            for (int i = 0; i < 4; i++) {
                c.task((Integer x) -> x + 1, i).name("inc").onNode(i % 2, Affinity.HARD).remote().get();
            }
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + c.metricsPort() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            String text = r.body();
            assertEquals(2, (long) value(text, "croupier_tasks_finished_total{node=\"0\",task=\"inc\"}"), text);
            assertEquals(2, (long) value(text, "croupier_tasks_finished_total{node=\"1\",task=\"inc\"}"), text);
            assertEquals(0, (long) value(text, "croupier_tasks_retried_total{node=\"driver\",task=\"inc\"}"), text);
            assertEquals(0, (long) value(text, "croupier_objects_rebuilt_total{node=\"driver\"}"), text);
            assertTrue(value(text, "croupier_store_used_bytes{node=\"1\"}") >= 0, text);
            assertEquals(0, (long) value(text, "croupier_tasks_waiting{node=\"1\"}"), text);
            assertEquals(0, (long) value(text, "croupier_tasks_waiting{node=\"any\"}"), text);
        }
    }

    @Test
    void familiesArePresentLabelledAndMoveWithAJob() throws Exception {
        try (NodeServer a = NodeServer.builder().cpus(1).objectStoreBytes(32L << 20).spillDirectory(dir).metricsPort(0).start();
             NodeServer b = TestClusters.pullingOverTheStream(() -> NodeServer.builder().cpus(1)
                     .objectStoreBytes(32L << 20).spillDirectory(dir).metricsPort(0).start())) {
            String before = scrape(b);
            for (String family : new String[] {"croupier_tasks_queued", "croupier_tasks_running", "croupier_store_used_bytes",
                    "croupier_store_capacity_bytes", "croupier_spilled_bytes_total", "croupier_restored_bytes_total",
                    "croupier_fetched_bytes_total"}) {
                assertTrue(value(before, family + "{node=\"" + b.address() + "\"}") >= 0, family + " in:\n" + before);
            }
            assertEquals(32L << 20, (long) value(before, "croupier_store_capacity_bytes{node=\"" + b.address() + "\"}"));
            try (Cluster c = Cluster.builder().connect(a.address(), b.address()).start()) {
                var made = c.task((Long n) -> {
                    java.lang.foreign.MemorySegment out = TaskOutput.allocate(n);
                    out.fill((byte) 1);
                    return out;
                }, 2L << 20).name("make").onNode(0, Affinity.HARD).remote();
                for (int i = 0; i < 3; i++) {
                    c.task((java.lang.foreign.MemorySegment s) -> s.byteSize(), made).name("measure")
                            .onNode(1, Affinity.HARD).remote().get();
                }
            }
            String after = scrape(b);
            String labels = "{node=\"" + b.address() + "\",task=\"measure\"}";
            assertEquals(3, (long) value(after, "croupier_tasks_started_total" + labels), after);
            assertEquals(3, (long) value(after, "croupier_tasks_finished_total" + labels), after);
            assertEquals(0, (long) value(after, "croupier_tasks_failed_total" + labels), after);
            assertTrue(value(after, "croupier_fetched_bytes_total{node=\"" + b.address() + "\"}") >= 2L << 20,
                    "the pull moved the counter:\n" + after);
            assertTrue(after.lines().filter(l -> !l.startsWith("#") && !l.isBlank())
                    .allMatch(l -> l.startsWith("croupier_") && l.contains("node=\"")), "every series is labelled:\n" + after);
        }
    }
}
