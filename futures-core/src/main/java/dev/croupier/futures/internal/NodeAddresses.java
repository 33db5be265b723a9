package dev.croupier.futures.internal;

import dev.croupier.futures.CroupierException;
import dev.croupier.futures.ErrorCode;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * What the names a driver connects to ({@code host:port}) stand for: one node per address its
 * host resolves to, so a name that resolves to several addresses (a Kubernetes headless
 * service) is that many nodes. A driver resolves its names at start and again every
 * {@code resolveEvery} ({@link ProcessBackend}); lookups go through the JDK's resolver, which
 * caches an answer for {@code networkaddress.cache.ttl} (30 s by default), so a change of a
 * name's addresses is seen within that time. Stateless.
 */
public final class NodeAddresses {

    private NodeAddresses() {}

    /**
     * The {@code host:port} names in {@code given} (each may hold several, comma-separated),
     * checked for form only.
     *
     * @throws CroupierException {@link ErrorCode#BAD_INPUT} naming the first that is not
     *     {@code HOST:PORT}
     */
    public static List<String> names(List<String> given) {
        List<String> out = new ArrayList<>();
        for (String a : given) {
            for (String one : a.split(",")) {
                String address = one.trim();
                int colon = address.lastIndexOf(':');
                if (colon <= 0 || colon == address.length() - 1) {
                    throw new CroupierException(ErrorCode.BAD_INPUT, "Cluster.Builder.connect: '" + address
                            + "' is not HOST:PORT");
                }
                try {
                    Integer.parseInt(address.substring(colon + 1));
                } catch (NumberFormatException e) {
                    throw new CroupierException(ErrorCode.BAD_INPUT, "Cluster.Builder.connect: '" + address
                            + "' has no port number");
                }
                out.add(address);
            }
        }
        return out;
    }

    /**
     * The addresses ({@code ip:port}) the names resolve to now, in order, without repeats.
     *
     * @throws CroupierException {@link ErrorCode#UNAVAILABLE} naming a host that does not resolve
     */
    public static List<String> resolve(List<String> names) {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        for (String name : names) {
            int colon = name.lastIndexOf(':');
            String host = name.substring(0, colon);
            String port = name.substring(colon + 1);
            try {
                for (InetAddress ip : InetAddress.getAllByName(host)) {
                    out.add(ip.getHostAddress() + ":" + port);
                }
            } catch (UnknownHostException e) {
                throw new CroupierException(ErrorCode.UNAVAILABLE, "Cluster.Builder.connect: host '" + host
                        + "' does not resolve", e);
            }
        }
        return List.copyOf(out);
    }
}
