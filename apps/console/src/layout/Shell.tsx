import {
  AppShell,
  Badge,
  Burger,
  Button,
  Group,
  NavLink,
  Text,
  Title,
  Tooltip,
} from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, Outlet, useLocation, useNavigate } from 'react-router';
import { useEventStream } from '../api/events';
import { useLogout, useMe } from '../api/queries';

const LINKS = [
  { to: '/datasets', label: 'Datasets', admin: false },
  { to: '/import', label: 'Import', admin: false },
  { to: '/transfers', label: 'Transfers', admin: false },
  { to: '/cache', label: 'Cache', admin: false },
  { to: '/donors', label: 'Donors', admin: true },
  { to: '/security', label: 'Security', admin: true },
];

const STREAM = {
  open: { color: 'teal', label: 'live', hint: 'Receiving live updates from the manager' },
  connecting: { color: 'yellow', label: 'reconnecting', hint: 'Live updates paused; retrying' },
  closed: { color: 'gray', label: 'offline', hint: 'No live updates' },
};

/** The signed-in frame: header with the user and sign-out, navigation, and the live stream. */
export function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const me = useMe().data!;
  const logout = useLogout();
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const stream = STREAM[useEventStream(true)];
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 200, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={opened}
              onClick={toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label="Toggle navigation"
            />
            <Title order={3}>FreeLoader</Title>
            <Tooltip label={stream.hint}>
              <Badge color={stream.color} variant="dot" aria-label={`event stream ${stream.label}`}>
                {stream.label}
              </Badge>
            </Tooltip>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <Text size="sm" visibleFrom="xs">
              {me.username}{' '}
              <Text span c="dimmed">
                ({me.role})
              </Text>
            </Text>
            <Button
              variant="default"
              size="xs"
              loading={logout.isPending}
              onClick={() => logout.mutate(undefined, { onSettled: () => void navigate('/login') })}
            >
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label="Main">
        {LINKS.filter((l) => !l.admin || me.role === 'admin').map((l) => (
          <NavLink
            key={l.to}
            component={Link}
            to={l.to}
            label={l.label}
            active={pathname.startsWith(l.to)}
            aria-current={pathname.startsWith(l.to) ? 'page' : undefined}
            onClick={close}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}
