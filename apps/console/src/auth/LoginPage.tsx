import { Button, Center, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { useForm } from '@mantine/form';
import { Navigate, useNavigate, useSearchParams } from 'react-router';
import { useLogin, useMe } from '../api/queries';
import { ErrorAlert } from '../ui/feedback';

/** Only same-app paths are followed after sign-in, never another origin. */
const safeNext = (next: string | null) => (next && /^\/(?!\/)/.test(next) ? next : '/datasets');

/** Sign in with a local account (the first admin's password is printed at first start). */
export function LoginPage() {
  const me = useMe();
  const login = useLogin();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const next = safeNext(params.get('next'));
  const form = useForm({
    initialValues: { username: '', password: '' },
    validate: {
      username: (v) => (v.trim() ? null : 'Enter your user name'),
      password: (v) => (v ? null : 'Enter your password'),
    },
  });
  if (me.data) return <Navigate to={next} replace />;
  return (
    <Center mih="100vh" bg="var(--mantine-color-gray-0)">
      <Paper withBorder shadow="sm" p="xl" w={380} component="main">
        <form
          onSubmit={form.onSubmit((v) =>
            login.mutate(
              { username: v.username.trim(), password: v.password },
              { onSuccess: () => void navigate(next, { replace: true }) },
            ),
          )}
          noValidate
        >
          <Stack>
            <div>
              <Title order={2}>FreeLoader</Title>
              <Text size="sm" c="dimmed">
                A cache for large scientific datasets on donated disks
              </Text>
            </div>
            <ErrorAlert error={login.error} title="Sign-in failed" />
            <TextInput
              label="User name"
              autoComplete="username"
              data-autofocus
              {...form.getInputProps('username')}
            />
            <PasswordInput
              label="Password"
              autoComplete="current-password"
              {...form.getInputProps('password')}
            />
            <Button type="submit" loading={login.isPending} fullWidth>
              Sign in
            </Button>
            <Text size="xs" c="dimmed">
              The first admin&apos;s password is printed once when the manager first starts, and
              saved in <code>~/.freeloader/manager/admin-password</code>. Admins add users with{' '}
              <code>freeloader user create</code>.
            </Text>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
