package dev.croupier.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.croupier.futures.internal.NodeService;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * deploy/kubernetes and deploy/Dockerfile, checked as far as a machine without Kubernetes can:
 * every manifest is read with the Kubernetes object model (fabric8) and no field is unknown to
 * it; the nodes get what they need (grpc probes on the node's port and health services, a grace
 * period longer than the drain, a memory-backed /dev/shm as large as the store, limits that
 * cover store and heap, a headless service that publishes not-ready pods, a disruption budget,
 * a token); and the image's entry point with the StatefulSet's arguments is a node command the
 * CLI accepts, and the driver Job's a sort against the service's name.
 */
class KubernetesManifestTest {

    private static final Path DEPLOY = Path.of("..", "deploy");
    private static final YAMLMapper YAML = new YAMLMapper();
    private static final List<KubernetesResource> RESOURCES = new ArrayList<>();

    @BeforeAll
    static void load() throws IOException {
        try (var files = Files.list(DEPLOY.resolve("kubernetes"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                for (JsonNode doc : YAML.readValues(YAML.createParser(f.toFile()), JsonNode.class).readAll()) {
                    KubernetesResource r = YAML.treeToValue(doc, KubernetesResource.class);
                    assertNotNull(r, f.toString());
                    assertNoUnknownField(r, f.getFileName() + ":" + doc.path("kind").asText());
                    RESOURCES.add(r);
                }
            }
        }
    }

    /** fabric8 keeps fields it does not know in additionalProperties: there must be none. */
    private static void assertNoUnknownField(Object o, String where) {
        if (o == null || o instanceof String || o instanceof Number || o instanceof Boolean || o instanceof Quantity) {
            return;
        }
        if (o instanceof Collection<?> c) {
            c.forEach(e -> assertNoUnknownField(e, where + "[]"));
            return;
        }
        if (o instanceof Map<?, ?> m) {
            m.forEach((k, v) -> assertNoUnknownField(v, where + "." + k));
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.")) {
            return;
        }
        for (Method getter : o.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || !getter.getName().startsWith("get") || getter.getName().equals("getClass")) {
                continue;
            }
            Object value;
            try {
                value = getter.invoke(o);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(where + ": " + getter, e);
            }
            if (getter.getName().equals("getAdditionalProperties")) {
                assertTrue(((Map<?, ?>) value).isEmpty(), where + " has fields Kubernetes does not know: " + value);
            } else {
                assertNoUnknownField(value, where + "." + getter.getName().substring(3));
            }
        }
    }

    private static <T> T one(Class<T> kind) {
        List<T> found = RESOURCES.stream().filter(kind::isInstance).map(kind::cast).toList();
        assertEquals(1, found.size(), "one " + kind.getSimpleName());
        return found.getFirst();
    }

    private static Container node() {
        return one(StatefulSet.class).getSpec().getTemplate().getSpec().getContainers().getFirst();
    }

    /** The node container's arguments with $(VAR) taken from the ConfigMap, as the kubelet expands them. */
    private static List<String> nodeArgs() {
        Map<String, String> config = one(ConfigMap.class).getData();
        List<String> args = new ArrayList<>();
        for (String a : node().getArgs()) {
            Matcher m = Pattern.compile("\\$\\((\\w+)\\)").matcher(a);
            args.add(m.replaceAll(r -> {
                String v = config.get(r.group(1));
                assertNotNull(v, "the ConfigMap sets " + r.group(1));
                return v;
            }));
        }
        return args;
    }

    private static String arg(List<String> args, String flag) {
        int i = args.indexOf(flag);
        assertTrue(i >= 0 && i + 1 < args.size(), flag + " in " + args);
        return args.get(i + 1);
    }

    @Test
    void everyManifestIsReadAndTheNodesHaveWhatTheyNeed() {
        assertTrue(RESOURCES.size() >= 7, "StatefulSet, Service, PDB, ConfigMap, Secret, Job, volume: " + RESOURCES.size());
        StatefulSet set = one(StatefulSet.class);
        Container node = node();
        List<String> args = nodeArgs();
        int port = Integer.parseInt(arg(args, "--port"));
        assertEquals(port, node.getPorts().getFirst().getContainerPort());

        assertEquals(port, node.getReadinessProbe().getGrpc().getPort(), "readiness asks the node's port");
        String readiness = node.getReadinessProbe().getGrpc().getService();
        assertEquals(NodeService.READINESS, readiness == null ? "" : readiness, "readiness is the server's status");
        assertEquals(port, node.getLivenessProbe().getGrpc().getPort());
        assertEquals(NodeService.LIVENESS, node.getLivenessProbe().getGrpc().getService());

        long drain = Long.parseLong(arg(args, "--drain-seconds"));
        assertTrue(set.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds() > drain,
                "the grace period outlasts the drain");

        long store = Options.parseSize("--store-memory", arg(args, "--store-memory"));
        assertEquals("/dev/shm", arg(args, "--memory-dir"));
        String shmVolume = node.getVolumeMounts().stream().filter(m -> m.getMountPath().equals("/dev/shm"))
                .findFirst().orElseThrow().getName();
        Volume shm = set.getSpec().getTemplate().getSpec().getVolumes().stream()
                .filter(v -> v.getName().equals(shmVolume)).findFirst().orElseThrow();
        assertEquals("Memory", shm.getEmptyDir().getMedium(), "the store lives in memory");
        assertTrue(Quantity.getAmountInBytes(shm.getEmptyDir().getSizeLimit()).longValue() >= store,
                "/dev/shm holds the store");
        String heapFlag = Arrays.stream(one(ConfigMap.class).getData().get("JDK_JAVA_OPTIONS").split(" "))
                .filter(f -> f.startsWith("-Xmx")).findFirst().orElseThrow();
        long heap = Options.parseSize("-Xmx", heapFlag.substring(4));
        long limit = Quantity.getAmountInBytes(node.getResources().getLimits().get("memory")).longValue();
        assertTrue(limit >= store + heap, "the memory limit covers store and heap: " + limit);
        assertEquals(limit, Quantity.getAmountInBytes(node.getResources().getRequests().get("memory")).longValue());
        assertTrue(set.getSpec().getTemplate().getSpec().getSecurityContext().getRunAsNonRoot());

        Map<String, String> podLabels = set.getSpec().getTemplate().getMetadata().getLabels();
        Service service = one(Service.class);
        assertEquals("None", service.getSpec().getClusterIP(), "headless");
        assertTrue(service.getSpec().getPublishNotReadyAddresses(), "peers see nodes from their start");
        assertEquals(set.getSpec().getServiceName(), service.getMetadata().getName());
        assertTrue(podLabels.entrySet().containsAll(service.getSpec().getSelector().entrySet()));
        assertEquals(port, service.getSpec().getPorts().getFirst().getPort());
        assertTrue(podLabels.entrySet().containsAll(
                one(PodDisruptionBudget.class).getSpec().getSelector().getMatchLabels().entrySet()));

        assertEquals("0.0.0.0", arg(args, "--bind"));
        String secret = one(Secret.class).getMetadata().getName();
        assertTrue(node.getEnv().stream().anyMatch(e -> e.getName().equals("CROUPIER_TOKEN")
                && e.getValueFrom().getSecretKeyRef().getName().equals(secret)),
                "a node that binds every address carries the token");
        assertTrue(one(PersistentVolumeClaim.class).getSpec().getAccessModes().contains("ReadWriteMany"),
                "driver and nodes share the data");
    }

    @Test
    void theImageRunsTheNodeAndSortCommandsTheManifestsGive() throws IOException {
        String dockerfile = Files.readString(DEPLOY.resolve("Dockerfile"));
        Matcher entry = Pattern.compile("(?m)^ENTRYPOINT (\\[.*])$").matcher(dockerfile);
        assertTrue(entry.find(), "an exec-form ENTRYPOINT");
        List<String> entrypoint = Arrays.asList(new ObjectMapper().readValue(entry.group(1), String[].class));
        assertEquals("java", entrypoint.getFirst());
        assertEquals(CroupierCli.class.getName(), entrypoint.getLast(), "the image runs the CLI");
        String flags = entrypoint.stream().filter(a -> a.startsWith("@")).findFirst().orElseThrow().substring(1);
        assertTrue(dockerfile.contains("croupier-jvm.flags " + flags), "the flags file the entry point reads is copied");
        Matcher user = Pattern.compile("(?m)^USER (\\S+)").matcher(dockerfile);
        assertTrue(user.find() && !user.group(1).startsWith("0") && !user.group(1).startsWith("root"), "not root");

        List<String> args = nodeArgs();
        assertEquals("node", args.getFirst());
        assertTrue(CroupierCli.COMMANDS.containsKey("node"));
        String[] nodeFlags = args.subList(1, args.size()).toArray(String[]::new);
        Options parsed = Options.parse("node", nodeFlags, Set.of(), NodeCommand.VALUED); // refuses an unknown flag
        assertTrue(parsed.positional().isEmpty(), String.valueOf(parsed.positional()));
        parsed.size("store-memory", 0, 1L << 20, 1L << 42);
        parsed.integer("cpus", 1, 1, 4096);
        parsed.integer("drain-seconds", 20, 0, 3600);

        Container driver = one(Job.class).getSpec().getTemplate().getSpec().getContainers().getFirst();
        List<String> job = driver.getArgs();
        assertTrue(CroupierCli.COMMANDS.containsKey(job.getFirst()), job.getFirst());
        Service service = one(Service.class);
        assertEquals(service.getMetadata().getName() + ":" + service.getSpec().getPorts().getFirst().getPort(),
                arg(job, "--cluster"), "the driver names the headless service");
        assertTrue(driver.getEnv().stream().anyMatch(e -> e.getName().equals("CROUPIER_TOKEN")));
    }
}
