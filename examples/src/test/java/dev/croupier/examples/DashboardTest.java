package dev.croupier.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.croupier.futures.Affinity;
import dev.croupier.futures.Cluster;
import dev.croupier.futures.NodeServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard in a real browser: headless Chromium loads the page, its script asks the
 * report, and the rendered page shows every node's address and the tasks a job ran there.
 * Skipped, saying why, where Chromium is not installed (CI installs it).
 */
@Timeout(180)
class DashboardTest {

    @TempDir
    Path dir;

    private static String chromium() {
        for (String c : List.of("chromium", "chromium-browser", "google-chrome")) {
            for (String p : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
                if (Files.isExecutable(Path.of(p, c))) {
                    return Path.of(p, c).toString();
                }
            }
        }
        return null;
    }

    @Test
    void chromiumShowsEveryNodeAndTheTasksOfAJob() throws Exception {
        String chromium = chromium();
        if (chromium == null) {
            System.out.println("DashboardTest skipped: no chromium on PATH (apt-get install chromium)");
        }
        Assumptions.assumeTrue(chromium != null, "no chromium on PATH");
        try (NodeServer a = NodeServer.builder().cpus(1).objectStoreBytes(16L << 20).spillDirectory(dir).start();
             NodeServer b = NodeServer.builder().cpus(1).objectStoreBytes(16L << 20).spillDirectory(dir).start()) {
            try (Cluster c = Cluster.builder().connect(a.address(), b.address()).start()) {
                for (int i = 0; i < 4; i++) {
                    c.task((Integer x) -> x * 2, i).name("double").onNode(i % 2, Affinity.HARD).remote().get();
                }
            }
            HttpServer page = DashboardCommand.serve(a.address() + "," + b.address(), "127.0.0.1", 0);
            try {
                String url = "http://127.0.0.1:" + page.getAddress().getPort() + "/";
                List<String> cmd = new ArrayList<>(List.of(chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-dev-shm-usage", "--user-data-dir=" + dir.resolve("profile"),
                        "--virtual-time-budget=5000", "--dump-dom", url));
                Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
                String dom = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(p.waitFor(120, TimeUnit.SECONDS));
                assertEquals(0, p.exitValue(), dom);
                assertTrue(dom.contains("<td>" + a.address() + "</td>") && dom.contains("<td>" + b.address() + "</td>"),
                        "every node is on the page:\n" + dom);
                assertTrue(dom.contains("<td>double</td>"), "the job's tasks are on the page:\n" + dom);
                assertTrue(dom.contains("2 nodes, at"), "the report arrived:\n" + dom);
            } finally {
                page.stop(0);
            }
        }
    }
}
