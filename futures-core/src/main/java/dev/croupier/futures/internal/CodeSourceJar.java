package dev.croupier.futures.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * What a driver ships to a node that lacks a task's code class: the jar the class was loaded
 * from, or, for a class folder (an IDE's or a build's output), a jar of that folder's class files.
 * The unit is the code source, not the class, because a function's class needs its neighbours
 * (nested classes, the helpers it calls); libraries of other jars must be on the node's class
 * path. Stateless.
 */
final class CodeSourceJar {

    private CodeSourceJar() {
    }

    /**
     * The jar to ship for {@code type}.
     *
     * @throws IOException naming the class and why it cannot be shipped
     */
    static byte[] of(Class<?> type) throws IOException {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            throw new IOException("class " + type.getName() + " has no code source to ship (was it generated at run time?)");
        }
        Path where;
        try {
            where = Path.of(source.getLocation().toURI());
        } catch (URISyntaxException | IllegalArgumentException notAFile) {
            throw new IOException("class " + type.getName() + " comes from " + source.getLocation()
                    + ", which is not a local jar or folder");
        }
        if (Files.isRegularFile(where)) {
            checkSize(type, where, Files.size(where));
            return Files.readAllBytes(where);
        }
        if (!Files.isDirectory(where)) {
            throw new IOException("the code source of class " + type.getName() + ", " + where + ", does not exist");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(1 << 16);
        try (JarOutputStream jar = new JarOutputStream(bytes);
             Stream<Path> files = Files.walk(where)) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))
                    .filter(Files::isRegularFile).sorted()::iterator) {
                jar.putNextEntry(new JarEntry(where.relativize(file).toString().replace(java.io.File.separatorChar, '/')));
                Files.copy(file, jar);
                jar.closeEntry();
                checkSize(type, where, bytes.size());
            }
        }
        return bytes.toByteArray();
    }

    private static void checkSize(Class<?> type, Path where, long size) throws IOException {
        if (size > SessionClassLoader.MAX_JAR_BYTES) {
            throw new IOException("the code source of class " + type.getName() + ", " + where + ", holds more than "
                    + (SessionClassLoader.MAX_JAR_BYTES >> 20) + " MiB, more than a node takes; put it on the nodes'"
                    + " class path (croupier node --classpath) instead");
        }
    }
}
