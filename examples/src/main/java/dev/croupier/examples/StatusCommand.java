package dev.croupier.examples;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.croupier.futures.CroupierException;
import dev.croupier.futures.NodeStatus;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code croupier status --cluster ADDRS}: asks each running node ({@link NodeStatus#query}) for
 * its store, its tasks and its driver sessions, and prints a row per node, or one JSON object.
 * A node that does not answer is named on stderr (under {@code unreachable} in JSON) and makes
 * the exit code 1, after the others are listed: status is how one finds the node that is down.
 */
final class StatusCommand implements CroupierCli.Command {

    private static final String USAGE = """
            usage: croupier status --cluster HOST:PORT[,HOST:PORT...] [--json]
              Lists each node (croupier node): address, store memory used and capacity, bytes spilled,
              tasks running and queued, driver sessions. Exits 1 if a node does not answer.
              --cluster ADDRS       the nodes' addresses, comma-separated
              --json                print one JSON object: {"nodes": [...], "unreachable": [...]}""";

    @Override
    public int run(String[] args) throws IOException {
        if (List.of(args).contains("--help")) {
            System.out.println(USAGE);
            return 0;
        }
        Options o = Options.parse("status", args, Set.of("json"), Set.of("cluster"));
        if (!o.positional().isEmpty()) {
            throw new UsageException("takes no positional arguments, got " + o.positional());
        }
        String cluster = o.string("cluster", null);
        if (cluster == null) {
            throw new UsageException("needs --cluster HOST:PORT[,HOST:PORT...]");
        }
        Map<String, Object> report = report(cluster);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> nodes = (List<Map<String, Object>>) report.get("nodes");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> unreachable = (List<Map<String, Object>>) report.get("unreachable");
        if (!o.flag("json")) {
            unreachable.forEach(u -> System.err.println("croupier status: " + u.get("error")));
        }
        if (o.flag("json")) {
            System.out.println(new ObjectMapper().writeValueAsString(report));
        } else {
            System.out.printf(Locale.ROOT, "%-22s %14s %14s %14s %8s %8s %9s%n", "node", "store used", "capacity",
                    "spilled", "running", "queued", "sessions");
            for (Map<String, Object> n : nodes) {
                System.out.printf(Locale.ROOT, "%-22s %14d %14d %14d %8d %8d %9d%n", n.get("address"),
                        n.get("store_used_bytes"), n.get("store_capacity_bytes"), n.get("spilled_bytes"),
                        n.get("tasks_running"), n.get("tasks_queued"), n.get("driver_sessions"));
            }
        }
        return unreachable.isEmpty() ? 0 : 1;
    }

    /**
     * Every node behind {@code cluster} (a name stands for each address it resolves to, as a
     * headless service's does), as {@code status --json} and the dashboard show it: "nodes",
     * one row per node that answered, with its tasks by name; "unreachable", one per node that
     * did not, with why.
     */
    static Map<String, Object> report(String cluster) {
        List<Map<String, Object>> nodes = new ArrayList<>();
        List<Map<String, Object>> unreachable = new ArrayList<>();
        for (String address : dev.croupier.futures.internal.NodeAddresses.resolve(ClusterOptions.addresses(cluster))) {
            try {
                NodeStatus s = NodeStatus.query(address);
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("address", s.address());
                row.put("store_used_bytes", s.storeUsedBytes());
                row.put("store_capacity_bytes", s.storeCapacityBytes());
                row.put("spilled_bytes", s.bytesSpilled());
                row.put("tasks_running", s.tasksRunning());
                row.put("tasks_queued", s.tasksQueued());
                row.put("driver_sessions", s.driverSessions());
                List<Map<String, Object>> tasks = new ArrayList<>();
                for (NodeStatus.TaskCount t : s.tasks()) {
                    Map<String, Object> task = new LinkedHashMap<>();
                    task.put("name", t.name());
                    task.put("started", t.started());
                    task.put("finished", t.finished());
                    task.put("failed", t.failed());
                    tasks.add(task);
                }
                row.put("tasks", tasks);
                nodes.add(row);
            } catch (CroupierException e) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("address", address);
                row.put("error", e.getMessage());
                unreachable.add(row);
            }
        }
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("nodes", nodes);
        report.put("unreachable", unreachable);
        return report;
    }
}
