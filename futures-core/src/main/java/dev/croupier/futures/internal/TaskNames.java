package dev.croupier.futures.internal;

import java.io.Serializable;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;

/**
 * Default task names: {@code Class::method} of a lambda's or method reference's target, else
 * the function's class name. Computed once per function class.
 */
final class TaskNames {

    private static final ClassValue<String> NAMES = new ClassValue<>() {
        @Override
        protected String computeValue(Class<?> type) {
            return nameOf(type);
        }
    };

    private TaskNames() {}

    static String of(Serializable fn) {
        String name = NAMES.get(fn.getClass());
        return name != null ? name : lambdaName(fn);
    }

    /** Null for lambda classes, whose name depends on the instance's serialized form. */
    private static String nameOf(Class<?> type) {
        return type.isSynthetic() || type.getName().contains("$$Lambda") ? null : type.getSimpleName();
    }

    private static String lambdaName(Serializable fn) {
        try {
            Method writeReplace = fn.getClass().getDeclaredMethod("writeReplace");
            writeReplace.setAccessible(true);
            SerializedLambda lambda = (SerializedLambda) writeReplace.invoke(fn);
            String owner = lambda.getImplClass();
            return owner.substring(owner.lastIndexOf('/') + 1) + "::" + lambda.getImplMethodName();
        } catch (ReflectiveOperationException | ClassCastException | SecurityException e) {
            return fn.getClass().getSimpleName();
        }
    }
}
