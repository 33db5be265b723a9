package dev.croupier.examples;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Set;

/**
 * {@code croupier dashboard --cluster ADDRS [--port P] [--bind ADDR]}: a live page of the
 * nodes (memory used and capacity, spilled bytes, tasks running and queued, driver sessions)
 * and of the jobs on them (attempts by task name summed over the nodes: the phases, and how far
 * each is). One static page that asks {@code status.json}, the report of
 * {@code croupier status --json} ({@link StatusCommand#report}), every second: no framework.
 */
final class DashboardCommand implements CroupierCli.Command {

    private static final String USAGE = """
            usage: croupier dashboard --cluster HOST:PORT[,HOST:PORT...] [--port P] [--bind ADDR]
              Serves a page, refreshed every second, of the nodes and of the tasks they run, by name.
              --cluster ADDRS       the nodes (a name stands for every address it resolves to)
              --port P              the page's port (default 8080; 0 for any free one, printed)
              --bind ADDR           the page's address (default 127.0.0.1: this machine only)""";

    @Override
    public int run(String[] args) throws IOException, InterruptedException {
        if (List.of(args).contains("--help")) {
            System.out.println(USAGE);
            return 0;
        }
        Options o = Options.parse("dashboard", args, Set.of(), Set.of("cluster", "port", "bind"));
        if (!o.positional().isEmpty()) {
            throw new UsageException("takes no positional arguments, got " + o.positional());
        }
        String cluster = o.string("cluster", null);
        if (cluster == null) {
            throw new UsageException("needs --cluster HOST:PORT[,HOST:PORT...]");
        }
        ClusterOptions.addresses(cluster); // refused here, with the flag named, if malformed
        HttpServer server = serve(cluster, o.string("bind", "127.0.0.1"), o.integer("port", 8080, 0, 65535));
        System.out.println("croupier dashboard at http://" + o.string("bind", "127.0.0.1") + ":"
                + server.getAddress().getPort() + "/");
        System.out.flush();
        Thread.currentThread().join(); // serves until the process is stopped
        return 0;
    }

    /** Starts serving the page and its report for {@code cluster}; stop the returned server to end. */
    static HttpServer serve(String cluster, String bind, int port) throws IOException {
        byte[] page;
        try (InputStream in = DashboardCommand.class.getResourceAsStream("dashboard.html")) {
            page = in.readAllBytes();
        }
        ObjectMapper json = new ObjectMapper();
        HttpServer server = HttpServer.create(new InetSocketAddress(bind, port), 16);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            if (path.equals("/") || path.equals("/index.html")) {
                send(exchange, "text/html; charset=utf-8", page);
            } else if (path.equals("/status.json")) {
                send(exchange, "application/json", json.writeValueAsBytes(StatusCommand.report(cluster)));
            } else {
                exchange.sendResponseHeaders(404, -1);
                exchange.close();
            }
        });
        server.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "croupier-dashboard");
            t.setDaemon(true);
            return t;
        }));
        server.start();
        return server;
    }

    private static void send(HttpExchange exchange, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        exchange.sendResponseHeaders(200, body.length);
        try (var out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
