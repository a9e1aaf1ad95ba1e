/* A shared object that asks for an executable stack (linked with
 * -z execstack): loading it makes the loader mprotect the stack
 * PROT_EXEC, which W^X refuses, so dlopen() must fail. */
int securer_execstack_probe (void);

int
securer_execstack_probe (void)
{
  return 42;
}
