package dev.croupier.objectstore;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BuilderValidationTest {

    @TempDir
    Path dir;

    private void assertRejected(String knob, UnaryOperator<ObjectStore.Builder> setting) {
        ObjectStore.Builder builder = ObjectStore.builder().name("validation").memoryDirectory(dir).spillDirectory(dir);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> setting.apply(builder).build());
        assertTrue(e.getMessage().startsWith(knob + " = "), e.getMessage());
    }

    @Test
    void everyBadKnobIsNamedWithItsValue() {
        assertRejected("capacityBytes", b -> b.capacityBytes(100));
        assertRejected("capacityBytes", b -> b.capacityBytes(-1));
        assertRejected("spillFileBytes", b -> b.spillFileBytes(1));
        assertRejected("compression", b -> b.compression(null));
        assertRejected("name", b -> b.name("a/b"));
        assertRejected("name", b -> b.name(""));
        assertRejected("memoryDirectory", b -> b.memoryDirectory(dir.resolve("missing")));
        assertRejected("spillDirectory", b -> b.spillDirectory(dir.resolve("missing")));
        assertRejected("directory", b -> b.directory(true).sharedMemory(false));
    }
}
